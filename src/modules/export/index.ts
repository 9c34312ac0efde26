// What the list modules use to export their pages (docs/export-import.md): the route declaration,
// the request schema, the streamed answer, and the column helpers.
export { exportAnswer, exportRequestSchema, exportRoute, downloadHeaders, when, EXPORT_CHUNK, EXPORT_FORMATS, CSV_TYPE, XLSX_TYPE } from './export.ts';
export type { ExportColumn, ExportFormat, ExportPlan } from './export.ts';
