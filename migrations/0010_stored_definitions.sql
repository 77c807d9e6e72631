-- 0010 stored definitions: the SHA-256 of each view's and macro's definition as DuckDB
-- stores it in this file (duckdb_views().sql, duckdb_functions().macro_definition), written
-- when sphragis (re)creates it. A read-only open compares the stored definition with it, so
-- a view replaced from another client (same name, other SQL) is refused, never reported
-- under sphragis's stamp.
alter table sph_views add column stored_sha256 varchar;
