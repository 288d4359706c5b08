DROP TABLE discovery_jobs;
DROP TABLE discovery_candidates;
DROP TABLE discovery_events;
