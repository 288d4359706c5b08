DROP TABLE guard_stats;
DROP TABLE guard_tasks;
DROP TABLE guard_feedback;
DROP TABLE guard_models;
