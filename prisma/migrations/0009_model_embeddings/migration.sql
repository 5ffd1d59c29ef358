-- Embedding models: an encoder registered with a tokenizer (tokenizer.json in
-- S3 at tokenizer_key) serves POST /v1/embeddings with these settings
-- (pooling, normalize, output, maxTokens, tokenizerSha256). Both NULL for
-- every other model.
ALTER TABLE "models"
    ADD COLUMN "tokenizer_key" TEXT,
    ADD COLUMN "embedding" JSONB;
