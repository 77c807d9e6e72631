-- 0008 sql registry: what each recorded SQL file defines and which code recorded it.
-- kind: 'view' (a select) or 'macro' (a table macro, a parametrised figure);
-- code_version: sphragis::CODE_VERSION of the binary that first recorded the file, named
-- when a later binary finds the file changed.
alter table sph_views add column kind varchar default 'view';
alter table sph_views add column code_version varchar;
