-- PostgreSQL's 0009 orders the event stream by writing transaction. SQLite needs nothing: its
-- single writer commits events in seq order. Kept so both backends count the same versions.
SELECT 1;
