-- Traffic split: a model's routing table of versions and weights. A job that
-- names the model without a version is routed by weight; no rows means the
-- latest version. The table is replaced whole by PUT /v1/models/:name/routing.
CREATE TABLE "model_routes" (
    "model_name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "weight" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_by" UUID,
    CONSTRAINT "model_routes_pkey" PRIMARY KEY ("model_name", "version"),
    CONSTRAINT "model_routes_weight_check" CHECK ("weight" >= 0),
    CONSTRAINT "model_routes_model_name_version_fkey" FOREIGN KEY ("model_name", "version") REFERENCES "models"("name", "version") ON DELETE CASCADE,
    CONSTRAINT "model_routes_updated_by_fkey" FOREIGN KEY ("updated_by") REFERENCES "api_keys"("id") ON DELETE SET NULL
);
