import { z } from 'zod';

const bool = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], { message: 'must be true or false' })
    .default(def ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1' || v === 'yes' || v === 'on');

const int = (def: number, min: number, max: number) =>
  z.coerce
    .number({ message: 'must be a number' })
    .int('must be an integer')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`)
    .default(def);

const list = z
  .string()
  .default('')
  .transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );

const MiB = 1024 * 1024;

const schema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: int(3000, 0, 65535),
    /** Unset: 127.0.0.1 (this machine only), or 0.0.0.0 (every interface) when NODE_ENV=production. */
    HOST: z.string().optional(),
    DATABASE_PATH: z.string().min(1).default('./data/admin.db'),
    SQLITE_EXCLUSIVE: bool(false),
    /** Servers: create missing folders of DATABASE_PATH, FILES_DIR and BACKUP_DIR outside ./data too. */
    CREATE_MISSING_DIRS: bool(false),
    FILES_DIR: z.string().min(1).default('./data/files'),
    JWT_SECRET: z.string().optional(),
    JWT_ISSUER: z.string().min(1).default('edge-admin'),
    TOKEN_TTL_SECONDS: int(2592000, 60, 10 * 365 * 86400),
    CAPTCHA_ENABLED: bool(true),
    CAPTCHA_TTL_SECONDS: int(120, 10, 3600),
    CAPTCHA_PER_MINUTE: int(30, 1, 10000),
    ADMIN_LOGIN_NAME: z.string().regex(/^[A-Za-z0-9_.@-]{2,64}$/, 'must be 2-64 letters, digits or _.@-').default('admin'),
    ADMIN_PASSWORD: z.string().optional(),
    PASSWORD_MIN_LENGTH: int(8, 8, 128),
    CORS_ORIGINS: list,
    /** The name authenticator apps show for a TOTP entry (the otpauth:// issuer). */
    MFA_ISSUER: z.string().trim().min(1).max(64).regex(/^[^:]+$/, 'must not contain a colon').default('Edge Admin'),
    /**
     * WebAuthn relying party: the host name passkeys are bound to (the SPA's, e.g.
     * `admin.example.com`). Unset: the host of PUBLIC_URL, else `localhost`.
     */
    WEBAUTHN_RP_ID: z.string().regex(/^[a-z0-9.-]+$/i, 'must be a host name (no scheme or port)').optional(),
    /** Origins a passkey ceremony may come from (the SPA's). Unset: CORS_ORIGINS plus the origin of PUBLIC_URL. */
    WEBAUTHN_ORIGINS: list,
    MAX_UPLOAD_BYTES: int(50 * MiB, 1, 2 ** 40),
    MAX_IMAGE_BYTES: int(10 * MiB, 1, 2 ** 40),
    LOG_RETENTION_DAYS: int(180, 0, 36500),
    BLOB_GRACE_HOURS: int(24, 1, 24 * 365),
    MIN_FREE_MB: int(100, 0, 1024 * 1024),
    BACKUP_DIR: z.string().min(1).default('./data/backups'),
    BACKUP_EVERY_HOURS: int(24, 0, 24 * 365),
    BACKUP_KEEP: int(7, 1, 10000),
    SQLITE_BUSY_TIMEOUT_MS: int(5000, 0, 600_000),
    SHUTDOWN_TIMEOUT_SECONDS: int(10, 0, 3600),
    STARTUP_CHECK: z.enum(['quick', 'full', 'off'], { message: 'must be quick, full or off' }).default('quick'),
    STARTUP_CHECK_MAX_MB: int(256, 0, 1024 * 1024),
    LINK_TTL_SECONDS: int(3600, 10, 7 * 86400),
    PAGE_SIZE_MAX: int(100, 1, 1000),
    /** API keys (docs/api-keys.md): lifetime when none is asked for, and the longest allowed. */
    API_KEY_DEFAULT_DAYS: int(90, 1, 3650),
    API_KEY_MAX_DAYS: int(365, 1, 3650),
    /** Requests per key per minute, per process or isolate (0: no limit). */
    API_KEY_PER_MINUTE: int(600, 0, 1_000_000),
    /** A key's last use is written at most once per this many seconds (not on every request). */
    API_KEY_LAST_USED_SECONDS: int(60, 1, 86400),
    TRUST_PROXY: bool(false),
    DOCS_ENABLED: bool(true),
    /**
     * The vue-vben-admin dialect (docs/vben.md): mounted under this path prefix (e.g. `/vben`) when
     * set, off when empty. vben's `VITE_GLOB_API_URL` then points at `<service>/vben`.
     */
    VBEN_API_PREFIX: z
      .string()
      .regex(/^(\/[A-Za-z0-9_-]+)*$/, 'must be empty or a path like /vben')
      .default(''),
    /**
     * The service's public base URL (e.g. `https://admin.example.com/api`), named as `servers` in
     * /openapi.json. Unset: the document names a relative server (`/`). Never taken from the
     * request's Host header, which a client or a poisoned cache could set.
     */
    PUBLIC_URL: z
      .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
      .transform((u) => u.replace(/\/+$/, ''))
      .optional(),
    LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
    LOG_REQUESTS: bool(true),
    /** A `Server-Timing: db;dur=…;desc="N rt"` header on every response (database time and round trips). */
    SERVER_TIMING: bool(true),
    /**
     * Workers only: D1 read replication through the Sessions API (auth and writes on the primary,
     * the reads after the auth check on a replica at least as new as the client's X-D1-Bookmark).
     */
    D1_READ_REPLICATION: bool(false),
    /**
     * Where the RuoYi-Vue3 dialect is mounted (src/compat/ruoyi, docs/ruoyi.md), e.g. `/ruoyi`; unset:
     * not mounted. One path segment or more, no trailing slash.
     */
    RUOYI_API_PREFIX: z
      .string()
      .regex(/^(\/[A-Za-z0-9_-]+)+$/, 'must be a path such as /ruoyi (letters, digits, _ and -, no trailing slash)')
      .refine((p) => !/^\/(app|auth|health|docs|openapi\.json)(\/|$)/.test(p), 'must not overlap the native API (/app, /auth, /health, /docs)')
      .optional(),
    /**
     * At the first start (empty database): `ruoyi` shapes the menus for RuoYi-Vue3's views
     * (docs/ruoyi.md), `vben` for vue-vben-admin's (docs/vben.md).
     */
    MENU_PRESET: z
      .enum(['none', 'ruoyi', 'vben'], { message: 'must be none, ruoyi (RuoYi-Vue3 views) or vben (vue-vben-admin views)' })
      .default('none'),
  })
  .superRefine((c, ctx) => {
    if (c.NODE_ENV === 'production' && (!c.JWT_SECRET || new TextEncoder().encode(c.JWT_SECRET).length < 32)) {
      ctx.addIssue({
        code: 'custom',
        path: ['JWT_SECRET'],
        message: 'is required and must be at least 32 bytes when NODE_ENV=production',
      });
    }
    if (c.JWT_SECRET !== undefined && new TextEncoder().encode(c.JWT_SECRET).length < 32) {
      ctx.addIssue({ code: 'custom', path: ['JWT_SECRET'], message: 'must be at least 32 bytes' });
    }
  })
  // A laptop's fresh install (an admin API with a just-printed password) is not put on every
  // network interface unless asked; a production deployment listens on all, as before.
  .transform((c) => ({ ...c, HOST: c.HOST ?? (c.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1') }));

export type Config = z.infer<typeof schema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses configuration from a plain record (process.env on Bun, env bindings on Workers).
 * Empty strings count as unset. Throws ConfigError with one line naming the first bad variable.
 */
export function parseConfig(record: Record<string, unknown>): Config {
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) {
    if (typeof v === 'string' && v.trim() === '') continue;
    clean[k] = typeof v === 'string' ? v.trim() : v;
  }
  const result = schema.safeParse(clean);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const name = String(issue.path[0] ?? 'configuration');
    throw new ConfigError(`Invalid configuration: ${name} ${issue.message}`);
  }
  return result.data;
}

/** Test and tooling convenience: the defaults with some values overridden. */
export function configWith(overrides: Record<string, string> = {}): Config {
  return parseConfig({ NODE_ENV: 'test', ...overrides });
}
