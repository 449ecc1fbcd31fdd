-- A test clock's status as a column (CONTRACT §17: at most 3 clocks of an account advance at
-- once, counted in the batch that starts an advance). Clocks written before this read NULL
-- until their next change, and are not counted.
ALTER TABLE test_clocks ADD COLUMN status TEXT;
