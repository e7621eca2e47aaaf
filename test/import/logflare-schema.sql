-- The tables of an install of the original service (Logflare) that the importer reads, laid out
-- as the original's Ecto migrations leave them (Logflare/logflare, priv/repo/migrations, read at
-- e9444de8cd96; Ecto types: :string is varchar(255), :map jsonb, timestamps() two
-- timestamp(0) NOT NULL columns, references() bigint). Every column of `users`, `sources`,
-- `endpoint_queries` and `oauth_access_tokens` is here, in the order the migrations add them;
-- the foreign keys to tables the importer does not read (backends, partners,
-- oauth_applications) are left out. In the Supabase stack the schema is `_analytics` of the
-- `_supabase` database (DB_SCHEMA); the event tables of the Postgres adaptor are made per source by
-- test/import/original.ts as the adaptor makes them
-- (lib/logflare/backends/adaptor/postgres_adaptor/repo/migrations.ex).
CREATE SCHEMA IF NOT EXISTS _analytics;
SET search_path TO _analytics;

CREATE TABLE users (
  id bigserial PRIMARY KEY,
  email varchar(255),
  provider varchar(255) NOT NULL,
  token text NOT NULL,
  inserted_at timestamp(0) NOT NULL,
  updated_at timestamp(0) NOT NULL,
  api_key varchar(255) NOT NULL,
  old_api_key varchar(255),
  email_preferred varchar(255),
  name varchar(255),
  image varchar(255),
  email_me_product boolean NOT NULL DEFAULT true,
  admin boolean NOT NULL DEFAULT false,
  phone varchar(255),
  bigquery_project_id varchar(255),
  bigquery_dataset_location varchar(255),
  bigquery_dataset_id varchar(255),
  valid_google_account boolean,
  provider_uid text NOT NULL,
  company varchar(255),
  bigquery_udfs_hash varchar(255) NOT NULL DEFAULT '',
  bigquery_processed_bytes_limit bigint NOT NULL DEFAULT 10000000000,
  preferences jsonb,
  billing_enabled boolean NOT NULL DEFAULT false,
  endpoints_beta boolean DEFAULT false,
  metadata jsonb,
  partner_upgraded boolean DEFAULT false,
  partner_id bigint,
  bigquery_enable_managed_service_accounts boolean DEFAULT false,
  system_monitoring boolean NOT NULL DEFAULT false,
  bigquery_reservation_search varchar(255),
  bigquery_reservation_alerts varchar(255),
  bigquery_additional_projects varchar(255)
);
CREATE UNIQUE INDEX users_lower_email_index ON users (lower(email));

CREATE TABLE sources (
  id bigserial PRIMARY KEY,
  name varchar(255),
  token uuid NOT NULL,
  inserted_at timestamp(0) NOT NULL,
  updated_at timestamp(0) NOT NULL,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  public_token varchar(255),
  favorite boolean NOT NULL DEFAULT false,
  bigquery_table_ttl integer,
  webhook_notification_url varchar(255),
  slack_hook_url varchar(255),
  notifications jsonb NOT NULL DEFAULT '{}',
  custom_event_message_keys varchar(255),
  log_events_updated_at timestamp(0),
  bigquery_schema bytea,
  notifications_every integer DEFAULT 14400000,
  bq_table_partition_type text,
  lock_schema boolean DEFAULT false,
  validate_schema boolean DEFAULT true,
  drop_lql_filters bytea NOT NULL DEFAULT '\x836a',
  drop_lql_string varchar(255),
  v2_pipeline boolean DEFAULT false,
  suggested_keys varchar(255) DEFAULT '',
  service_name varchar(255),
  transform_copy_fields varchar(255),
  disable_tailing boolean DEFAULT false,
  bq_storage_write_api boolean DEFAULT false,
  bigquery_clustering_fields varchar(255),
  default_ingest_backend_enabled boolean DEFAULT false,
  system_source boolean DEFAULT false,
  system_source_type varchar(255),
  labels text,
  transform_key_values text,
  description text,
  default_search_lql text,
  transform_drop_fields text,
  enable_spooling boolean DEFAULT false
);
CREATE UNIQUE INDEX sources_name_index ON sources (name);
CREATE UNIQUE INDEX sources_public_token_index ON sources (public_token);
CREATE UNIQUE INDEX sources_token_index ON sources (token);
CREATE INDEX sources_user_id_index ON sources (user_id);
CREATE UNIQUE INDEX sources_user_id_system_source_type_index ON sources (user_id, system_source_type);

CREATE TABLE endpoint_queries (
  id bigserial PRIMARY KEY,
  name varchar(255),
  token uuid,
  query text,
  user_id bigint REFERENCES users (id) ON DELETE CASCADE,
  inserted_at timestamp(0) NOT NULL,
  updated_at timestamp(0) NOT NULL,
  source_mapping jsonb NOT NULL DEFAULT '{}',
  sandboxable boolean DEFAULT false,
  cache_duration_seconds integer DEFAULT 3600,
  proactive_requerying_seconds integer DEFAULT 1800,
  max_limit integer DEFAULT 1000,
  enable_auth boolean DEFAULT false,
  language varchar(255) NOT NULL,
  description varchar(255),
  sandbox_query_id bigint REFERENCES endpoint_queries (id),
  labels text,
  backend_id bigint,
  redact_pii boolean NOT NULL DEFAULT false,
  enable_dynamic_reservation boolean NOT NULL DEFAULT false
);
CREATE INDEX endpoint_queries_user_id_index ON endpoint_queries (user_id);
CREATE UNIQUE INDEX endpoint_queries_token_index ON endpoint_queries (token);
CREATE INDEX endpoint_queries_backend_id_index ON endpoint_queries (backend_id);

CREATE TABLE oauth_access_tokens (
  id bigserial PRIMARY KEY,
  application_id bigint,
  resource_owner_id integer,
  token varchar(255) NOT NULL,
  refresh_token varchar(255),
  expires_in integer,
  revoked_at timestamp(0),
  scopes varchar(255),
  previous_refresh_token varchar(255) NOT NULL DEFAULT '',
  inserted_at timestamp(0) NOT NULL,
  updated_at timestamp(0) NOT NULL,
  description text
);
CREATE UNIQUE INDEX oauth_access_tokens_token_index ON oauth_access_tokens (token);
CREATE INDEX oauth_access_tokens_resource_owner_id_index ON oauth_access_tokens (resource_owner_id);
CREATE UNIQUE INDEX oauth_access_tokens_refresh_token_index ON oauth_access_tokens (refresh_token);

RESET search_path;
