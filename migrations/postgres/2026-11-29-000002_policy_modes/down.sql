ALTER TABLE policies DROP COLUMN shadow;
