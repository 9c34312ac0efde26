import { Hono } from 'hono';
import { read } from './guard.ts';
import { ajax, ajaxData } from './respond.ts';

/**
 * TEMPORARY (issue 28): answers that every RuoYi page needs and whose modules are being built
 * (dictionaries, parameters and notices: issue 27). Until they land:
 * - the dictionaries RuoYi's pages render (useDict) come from this static map, in RuoYi's own
 *   values (status '0'/'1' and so on), not from a table, so they cannot be edited;
 * - `sys.user.initPassword` (the user form's preset password) is empty: the admin types one;
 * - the header's notice bell shows no notices.
 * Each is replaced by a file of its RuoYi area (dict.ts, config.ts, notice.ts) mapping the real
 * module, and this file goes away. Nothing here is a rule: every answer is read-only and static.
 */
type Item = readonly [value: string, label: string, listClass: string];
const DICTS: Record<string, readonly Item[]> = {
  sys_normal_disable: [['0', '正常', 'primary'], ['1', '停用', 'danger']],
  sys_user_sex: [['0', '男', ''], ['1', '女', ''], ['2', '未知', '']],
  sys_show_hide: [['0', '显示', 'primary'], ['1', '隐藏', 'danger']],
  sys_yes_no: [['Y', '是', 'primary'], ['N', '否', 'danger']],
  sys_notice_type: [['1', '通知', 'warning'], ['2', '公告', 'success']],
  sys_notice_status: [['0', '正常', 'primary'], ['1', '关闭', 'danger']],
  sys_job_group: [['DEFAULT', '默认', ''], ['SYSTEM', '系统', '']],
  sys_job_status: [['0', '正常', 'primary'], ['1', '暂停', 'danger']],
  sys_common_status: [['0', '成功', 'primary'], ['1', '失败', 'danger']],
  sys_oper_type: [
    ['0', '其它', 'info'], ['1', '新增', 'info'], ['2', '修改', 'info'], ['3', '删除', 'danger'], ['4', '授权', 'primary'],
    ['5', '导出', 'warning'], ['6', '导入', 'warning'], ['7', '强退', 'danger'], ['8', '生成代码', 'warning'], ['9', '清空数据', 'danger'],
  ],
};

/** RuoYi's SysDictData rows of one type (unknown types: none). */
export function interimDict(type: string) {
  return (DICTS[type] ?? []).map(([value, label, listClass], i) => ({
    dictCode: i + 1,
    dictSort: i + 1,
    dictLabel: label,
    dictValue: value,
    dictType: type,
    cssClass: '',
    listClass,
    isDefault: i === 0 ? 'Y' : 'N',
    status: '0',
  }));
}

export const interimRoutes = new Hono()
  .get('/system/dict/data/type/:type', ...read(null), async (c) => {
    await c.get('run').caller();
    return ajaxData(c, interimDict(c.req.param('type')));
  })
  .get('/system/config/configKey/:key', ...read(null), async (c) => {
    await c.get('run').caller();
    return ajax(c, {}, ''); // RuoYi reads the value from `msg`
  })
  .get('/system/notice/listTop', ...read(null), async (c) => {
    await c.get('run').caller();
    return ajax(c, { data: [], unreadCount: 0 });
  });
