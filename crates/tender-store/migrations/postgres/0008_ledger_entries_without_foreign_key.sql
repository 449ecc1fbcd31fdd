-- A ledger entry is written in the same statement as its posting, from the posting's own
-- RETURNING seq (postgres/ledger.rs), and postings are never deleted: the foreign key could
-- never fire. It cost every entry a lookup and a FOR KEY SHARE lock on its posting's row, and
-- that lookup is planned once per connection: planned while the table was nearly empty, it kept
-- scanning the whole table as it grew (docs/performance.md). An entry without its posting would
-- still show: `tender ledger verify` recomputes balances from postings joined to their entries
-- and compares them with the kept ones. Dropping a constraint changes only the catalogue.
ALTER TABLE ledger_entries DROP CONSTRAINT IF EXISTS ledger_entries_posting_seq_fkey;
