-- The names in a variable group's sealed `variables` (docs/secrets.md#variable-groups), kept in
-- plain beside them so the group list shows them without decrypting: names only, never a value.
-- Expand only (a nullable column): NULL marks a row written before it, which the list fills once.
ALTER TABLE "variable_groups" ADD COLUMN "variable_names" JSONB;
