-- Weighted fair scheduling across API keys: when keys at the same priority
-- both have work waiting for a model, each is served jobs in proportion to
-- its weight. Every existing key gets 1, so they keep sharing equally.
ALTER TABLE "api_keys"
    ADD COLUMN "weight" INTEGER NOT NULL DEFAULT 1 CONSTRAINT "api_keys_weight_check" CHECK ("weight" BETWEEN 1 AND 1000);
