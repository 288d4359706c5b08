DROP TABLE anomaly_tasks;
DROP TABLE anomaly_models;
