-- A deploy token minted by another API key (issue 27, docs/auth.md#deploy-tokens): it names the
-- key that minted it, goes when that key's row goes, and is revoked with it (ApiKeysStore.revoke
-- revokes a key's descendants in the same statement), so a minted key never outlives its minter.
ALTER TABLE "api_keys" ADD COLUMN "parent_key_id" TEXT;

CREATE INDEX "api_keys_parent_key_id_idx" ON "api_keys"("parent_key_id");

ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_parent_key_id_fkey" FOREIGN KEY ("parent_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;
