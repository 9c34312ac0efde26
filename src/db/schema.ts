import type { Generated, Insertable, Selectable } from 'kysely';

/** Kysely view of the tables created by migrations/. Times are ISO 8601 UTC strings. */
export interface Database {
  users: UsersTable;
  roles: RolesTable;
  menus: MenusTable;
  user_role: { user_id: number; role_id: number };
  role_menu: { role_id: number; menu_id: number };
  sessions: SessionsTable;
  captchas: CaptchasTable;
  rate_limits: RateLimitsTable;
  login_log: LoginLogTable;
  op_log: OpLogTable;
  blobs: BlobsTable;
  files: FilesTable;
  maintenance_cursors: { name: string; position: string; updated_at: string };
  orgs: OrgsTable;
  org_closure: { ancestor_id: number; descendant_id: number; depth: number };
  /** Users per organisation, kept by triggers (0010); never written by the app. */
  org_user_counts: { org_id: number; n: number };
  role_scope_org: { role_id: number; org_id: number };
  backups: BackupsTable;
  /** Scheduled jobs and their runs (0022, modules/jobs). */
  jobs: JobsTable;
  job_log: JobLogTable;
  /** Versions of what a process may cache, bumped by triggers (0018, db/versions.ts). */
  cache_versions: { name: string; n: number };
  // Standard modules (migrations 0020, 0021).
  dict_types: DictTypesTable;
  dict_data: DictDataTable;
  configs: ConfigsTable;
  notices: NoticesTable;
  notice_reads: { user_id: number; notice_id: number; read_at: string };
  posts: PostsTable;
  user_post: { user_id: number; post_id: number };
  /** API keys and the codes each may use (0026, modules/api-keys). */
  api_keys: ApiKeysTable;
  api_key_codes: { key_id: number; code: string };
  // Second factor (migration 0025, modules/mfa).
  mfa_totp: MfaTotpTable;
  mfa_recovery_codes: { user_id: number; code_hash: string; used_at: string | null };
  mfa_passkeys: MfaPasskeysTable;
  mfa_challenges: MfaChallengesTable;
}

export interface MfaTotpTable {
  user_id: number;
  /** Sealed (core/secret-box.ts), context `totp:user:<id>`. */
  secret: string;
  confirmed_at: string | null;
  last_step: number | null;
  created_at: string;
}

export interface MfaPasskeysTable {
  id: Generated<number>;
  user_id: number;
  credential_id: string;
  /** base64url COSE public key. */
  public_key: string;
  counter: number;
  /** JSON list. */
  transports: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface MfaChallengesTable {
  /** Keyed hash of the token the client holds. */
  id: string;
  kind: 'login' | 'register';
  user_id: number;
  session_id: string | null;
  login_name: string | null;
  password_hash: string | null;
  webauthn_challenge: string | null;
  expires_at: string;
  created_at: string;
}

export type Status = 'enabled' | 'disabled';

export interface UsersTable {
  id: Generated<number>;
  login_name: string;
  password_hash: string;
  nick_name: string;
  email: string | null;
  phone: string | null;
  avatar: string | null;
  status: Status;
  remark: string | null;
  last_login_at: string | null;
  last_login_ip: string | null;
  /** The user's organisation (NULL = none). */
  org_id: Generated<number | null>;
  /** A confirmed TOTP or a passkey exists (migration 0025; set with every change of the factors, modules/mfa). */
  mfa_enabled: Generated<number>;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface RolesTable {
  id: Generated<number>;
  name: string;
  code: string;
  sort: Generated<number>;
  status: Status;
  remark: string | null;
  data_scope: Generated<DataScopeKind>;
  /** 1: holders without a second factor are restricted to enrolling (migration 0025). */
  mfa_required: Generated<number>;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** Which rows a role's holders see (contract: "Organisations and data scope"). */
export type DataScopeKind = 'all' | 'orgAndBelow' | 'org' | 'custom' | 'self';

export interface OrgsTable {
  id: Generated<number>;
  parent_id: number;
  name: string;
  code: string;
  sort: Generated<number>;
  status: Status;
  remark: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export type MenuType = 'directory' | 'menu' | 'button';

export interface MenusTable {
  id: Generated<number>;
  parent_id: number;
  title: string;
  type: MenuType;
  path: string | null;
  component: string | null;
  icon: string | null;
  permission: string | null;
  sort: Generated<number>;
  hidden: Generated<number>;
  status: Status;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  /** Route name for SPA routers (migration 0008); null: the API shows `Menu<id>`. */
  name: string | null;
  keep_alive: Generated<number>;
}

export interface SessionsTable {
  id: string;
  user_id: number;
  ip: string;
  user_agent: string;
  browser: string;
  os: string;
  login_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface CaptchasTable {
  key: string;
  answer_hash: string;
  ip: string;
  expires_at: string;
  created_at: string;
}

export interface RateLimitsTable {
  key: string;
  count: number;
  window_start: string;
  locked_until: string | null;
}

export interface LoginLogTable {
  id: Generated<number>;
  login_name: string;
  user_id: number | null;
  status: 'success' | 'failure';
  msg: string;
  ip: string;
  user_agent: string;
  browser: string;
  os: string;
  country: string | null;
  city: string | null;
  trace_id: string;
  created_at: string;
  /** Which second factor completed the login (migration 0025). */
  factor: Generated<'totp' | 'passkey' | 'recovery' | null>;
}

export interface OpLogTable {
  id: Generated<number>;
  module: string;
  action: string;
  method: string;
  path: string;
  operator_id: number | null;
  operator_name: string | null;
  ip: string;
  user_agent: string;
  params: string;
  status: number;
  error_msg: string | null;
  duration_ms: number;
  trace_id: string;
  created_at: string;
  /** The API key the operation was made through (0026), else NULL. */
  api_key_id: number | null;
  api_key_name: string | null;
}

export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** SHA-256 (lowercase hex) of the key's random part. */
  secret_hash: string;
  expires_at: string;
  /** JSON array of CIDR blocks; `[]`: any address. */
  allowed_ips: string;
  revoked_at: string | null;
  revoked_by: number | null;
  last_used_at: string | null;
  last_used_ip: string | null;
  created_at: string;
}

export interface BlobsTable {
  sha256: string;
  size: number;
  ref_count: number;
  created_at: string;
  /** When ref_count last dropped to 0 (null while referenced); the sweep removes it after the grace period. */
  unreferenced_at: string | null;
  /** Set by an upload before it writes the bytes; the sweep does not claim a recently reserved row. */
  reserved_at?: string | null;
  /** Set by the sweep when it claims the row to delete its bytes; uploads wait for such a row to go. */
  removing_at?: string | null;
}

export interface FilesTable {
  id: Generated<number>;
  kind: 'file' | 'image';
  name: string;
  extension: string;
  content_type: string;
  size: number;
  sha256: string;
  width: number | null;
  height: number | null;
  created_by: number | null;
  created_at: string;
}

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;

export interface BackupsTable {
  id: Generated<number>;
  name: string;
  size: Generated<number>;
  sha256: Generated<string>;
  status: 'running' | 'done' | 'failed';
  trigger_type: 'manual' | 'scheduled';
  created_by: number | null;
  created_at: string;
  finished_at: string | null;
  error_msg: string | null;
}

export type DictTagType = 'default' | 'primary' | 'success' | 'info' | 'warning' | 'danger';

export interface DictTypesTable {
  id: Generated<number>;
  name: string;
  code: string;
  status: Status;
  remark: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface DictDataTable {
  id: Generated<number>;
  type_code: string;
  label: string;
  value: string;
  sort: Generated<number>;
  status: Status;
  tag_type: DictTagType;
  css_class: string | null;
  is_default: number;
  remark: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface ConfigsTable {
  id: Generated<number>;
  name: string;
  config_key: string;
  config_value: string;
  type: 'builtIn' | 'custom';
  remark: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface NoticesTable {
  id: Generated<number>;
  title: string;
  type: 'notice' | 'announcement';
  content: string;
  status: 'draft' | 'published' | 'closed';
  created_by: number | null;
  created_by_name: string;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface PostsTable {
  id: Generated<number>;
  code: string;
  name: string;
  sort: Generated<number>;
  status: Status;
  remark: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface JobsTable {
  id: Generated<number>;
  name: string;
  handler: string;
  cron: string;
  status: Status;
  misfire_policy: 'fire' | 'skip';
  concurrent: number;
  last_run_at: string | null;
  next_run_at: string | null;
  schedule_from: string;
  claimed_at: string | null;
  claim_id: string | null;
  resume: Generated<number>;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface JobLogTable {
  id: Generated<number>;
  job_id: number;
  job_name: string;
  status: 'success' | 'failure';
  message: string;
  started_at: string;
  finished_at: string;
  duration_ms: number;
}
