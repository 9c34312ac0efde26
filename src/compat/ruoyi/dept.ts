import { Hono } from 'hono';
import { badRequest } from '../../core/errors.ts';
import { addOrg, deleteOrgs, editOrg, orgDetail, OrgAddRequest, OrgEditRequest, orgTree, type Org, type OrgNode } from '../../modules/orgs/index.ts';
import { parsed, read, write } from './guard.ts';
import { ajax, ajaxData } from './respond.ts';
import { flatten, subtreeIds } from './trees.ts';
import { body } from './user.ts';
import { defined, fromRuoyiStatus, idOf, ruoyiTime, statusFilter, text, toRuoyiStatus } from './values.ts';

/** Our organisation → RuoYi's SysDept (leader, phone and email: no such fields here, always ''). */
export function ruoyiDept(o: Org, ancestors = '') {
  return {
    deptId: o.id,
    parentId: o.parentId,
    ancestors,
    deptName: o.name,
    orderNum: o.sort,
    leader: '',
    phone: '',
    email: '',
    status: toRuoyiStatus(o.status),
    delFlag: '0',
    createTime: ruoyiTime(o.createdAt),
    version: o.version,
  };
}

/** The forest as RuoYi's flat list, each with its `ancestors` ('0,100,101'). */
function flatDepts(forest: readonly OrgNode[]): ReturnType<typeof ruoyiDept>[] {
  const out: ReturnType<typeof ruoyiDept>[] = [];
  const walk = (n: OrgNode, ancestors: string) => {
    out.push(ruoyiDept(n, ancestors));
    n.children.forEach((c) => walk(c, `${ancestors},${n.id}`));
  };
  forest.forEach((n) => walk(n, n.parentId === 0 ? '0' : `0,${n.parentId}`));
  return out;
}

/**
 * Our organisations need a unique code and RuoYi's form has none: a new department gets
 * `D` + 12 hex digits of a fresh UUID (docs/ruoyi.md); the native API shows and edits it.
 */
export const generatedOrgCode = (uuid: string) => `D${uuid.replace(/-/g, '').slice(0, 12).toUpperCase()}`;

function deptFields(b: Record<string, unknown>) {
  return defined({
    parentId: b.parentId === undefined || b.parentId === '' || b.parentId === null ? undefined : Number(b.parentId),
    name: text(b.deptName),
    sort: b.orderNum === undefined || b.orderNum === '' ? undefined : Number(b.orderNum),
    status: b.status === undefined || b.status === '' ? undefined : fromRuoyiStatus(b.status),
  });
}

export const deptRoutes = new Hono()
  .get('/system/dept/list', ...read('sys:org:tree'), async (c) => {
    const name = text(c.req.query('deptName'));
    const status = statusFilter(c.req.query('status'));
    const rows = flatDepts(await orgTree(c.get('run'))).filter((d) => (!name || d.deptName.includes(name)) && (!status || d.status === (status === 'enabled' ? '0' : '1')));
    return ajaxData(c, rows);
  })
  .get('/system/dept/list/exclude/:id{[0-9]+}', ...read('sys:org:tree'), async (c) => {
    const id = idOf(c.req.param('id'), 'deptId');
    const forest = await orgTree(c.get('run'));
    const self = flatten(forest).find((n) => n.id === id);
    const out = new Set(self ? subtreeIds(self) : [id]);
    return ajaxData(c, flatDepts(forest).filter((d) => !out.has(d.deptId)));
  })
  .get('/system/dept/:id{[0-9]+}', ...read('sys:org:detail'), async (c) => ajaxData(c, ruoyiDept(await orgDetail(c.get('run'), idOf(c.req.param('id'), 'deptId')))))
  .post('/system/dept', ...write('sys:org:add', 'sysOrg', 'add'), async (c) => {
    const deps = c.get('deps');
    const input = parsed(OrgAddRequest, { ...deptFields(await body(c)), code: generatedOrgCode(deps.ids.uuid()) });
    c.set('opParams', input);
    await addOrg(deps, c.get('run'), input);
    return ajax(c);
  })
  .put('/system/dept', ...write('sys:org:edit', 'sysOrg', 'edit'), async (c) => {
    const b = await body(c);
    if (typeof b.version !== 'number') throw badRequest('version: missing; reload the department and try again');
    const id = idOf(b.deptId, 'deptId');
    // The echoed parent goes in as it is: ours applies the move rules only when it differs.
    const input = parsed(OrgEditRequest, { ...deptFields(b), id, version: b.version });
    c.set('opParams', input);
    await editOrg(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/dept/updateSort', ...write('sys:org:edit', 'sysOrg', 'edit'), () => {
    throw badRequest('Sorting several departments at once is not supported: edit each department (its order number) instead');
  })
  .delete('/system/dept/:id{[0-9]+}', ...write('sys:org:delete', 'sysOrg', 'delete'), async (c) => {
    const ids = [idOf(c.req.param('id'), 'deptId')];
    c.set('opParams', { ids });
    await deleteOrgs(c.get('run'), ids);
    return ajax(c);
  });
