DROP TABLE hourly_counts;
