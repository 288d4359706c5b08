DROP TABLE anomaly_reports;
