import type { DbPorts } from '../core/ports.ts';
import { applyRuoyiMenuPreset, ruoyiMenuPresetSql } from './ruoyi/index.ts';
import { applyVbenMenuPreset, vbenMenuPresetSql } from './vben/index.ts';

/** The menu presets by MENU_PRESET's value (docs/ruoyi.md, docs/vben.md). */
export const MENU_PRESETS = {
  ruoyi: { label: 'RuoYi-Vue3', apply: applyRuoyiMenuPreset, sql: ruoyiMenuPresetSql },
  vben: { label: 'vue-vben-admin', apply: applyVbenMenuPreset, sql: vbenMenuPresetSql },
} as const satisfies Record<string, { label: string; apply: (deps: DbPorts) => Promise<void>; sql: () => string }>;

export type MenuPresetName = keyof typeof MENU_PRESETS;

export const isMenuPreset = (name: string | undefined): name is MenuPresetName => !!name && Object.hasOwn(MENU_PRESETS, name);
