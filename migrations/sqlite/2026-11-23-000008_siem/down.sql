DROP TABLE siem_cursors;
DROP TABLE siem_sinks;
DROP TABLE leases;
