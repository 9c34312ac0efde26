// What the app and other modules may use of system parameters: the routes, the page filter (an
// export selects the same rows as the page for the same params), and what built-in behaviours
// read (login and the captcha: captchaOnSql; sysUser/add: initialPassword).
export { configRoutes } from './config.routes.ts';
export { configFilter } from './config.service.ts';
export { BUILT_IN, captchaOnSql, initialPassword } from './config-values.ts';
export type { ConfigRecord } from './config.schemas.ts';
// The RuoYi dialect (compat/ruoyi) maps RuoYi's parameter page onto these services, with the same
// op-log redaction of secret values as our routes (configAuditParams).
export { addConfig, configDetail, deleteConfigs, editConfig, pageConfigs } from './config.service.ts';
export { readConfigValue } from './config-values.ts';
export { configAuditParams } from './config.routes.ts';
export { ConfigAddRequest, ConfigEditRequest, ConfigPageRequest } from './config.schemas.ts';
export { exportConfigs } from './config.routes.ts';
