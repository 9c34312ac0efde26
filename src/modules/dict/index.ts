// What the app and other modules may use of dictionaries: the routes, and the page filters (an
// export selects the same rows as the page for the same params).
export { dictRoutes } from './dict.routes.ts';
export { dictTypeFilter } from './dict-types.service.ts';
export { dictDataFilter } from './dict-data.service.ts';
export { allDicts, dictItems } from './dict-read.service.ts';
export type { DictItem } from './dict.schemas.ts';
// The RuoYi dialect (compat/ruoyi) maps RuoYi's dictionary pages onto these services.
export { addDictType, deleteDictTypes, dictTypeDetail, editDictType, pageDictTypes } from './dict-types.service.ts';
export { addDictData, deleteDictData, dictDataDetail, editDictData, pageDictData } from './dict-data.service.ts';
export { DictDataAddRequest, DictDataEditRequest, DictDataPageRequest, DictTypeAddRequest, DictTypeEditRequest, DictTypePageRequest } from './dict.schemas.ts';
export type { DictData, DictType } from './dict.schemas.ts';
export { exportDictData, exportDictTypes } from './dict.routes.ts';
