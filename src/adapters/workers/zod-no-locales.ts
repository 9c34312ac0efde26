// Bundled in place of zod's locales index (see [alias] in wrangler.toml). zod reaches its 40+
// error-message translations only through `z.locales`, which the app never uses; English, the
// default, is imported by zod's schemas directly. Saves ~38 KiB gzip of the Worker bundle.
export {};
