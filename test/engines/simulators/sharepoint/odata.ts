/**
 * The OData plumbing of the SharePoint REST simulator: the `_api` path grammar
 * (`web/GetFolderByServerRelativeUrl('a/b')/Files/add(url='x.txt',overwrite=true)`, parameter
 * aliases `@a1` from the query string, `guid'…'` literals, `''` inside strings) and the three JSON
 * formats SharePoint answers in: verbose (`d`, `__metadata`, `results`, `__next`), minimal metadata
 * (`odata.metadata`, `odata.type`, `value`, `odata.nextLink`) and no metadata. Wire facts: §3.1, §3.9
 * of /work/shared/reference/sharepoint-graph/sharepoint-graph-wire.md.
 */

export type ODataValue = string | number | boolean | null;

export interface Segment {
  name: string;
  /** Lower-cased name, for case-insensitive dispatch (SharePoint's REST names are case-insensitive). */
  key: string;
  /** Positional arguments, then named ones; undefined when the segment had no parentheses. */
  args?: { positional: ODataValue[]; named: Record<string, ODataValue> };
}

export class ODataSyntaxError extends Error {}

/** Splits an already percent-decoded `_api` path into segments, honouring quotes and parentheses. */
export function parseApiPath(path: string, query: URLSearchParams): Segment[] {
  const segments: Segment[] = [];
  let i = 0;
  while (i < path.length) {
    let name = '';
    while (i < path.length && path[i] !== '/' && path[i] !== '(') name += path[i++];
    let args: Segment['args'];
    if (path[i] === '(') {
      i++;
      let inner = '';
      let quoted = false;
      for (; i < path.length; i++) {
        const c = path[i];
        if (c === "'") {
          if (quoted && path[i + 1] === "'") {
            inner += "''";
            i++;
            continue;
          }
          quoted = !quoted;
        } else if (c === ')' && !quoted) break;
        inner += c;
      }
      if (path[i] !== ')') throw new ODataSyntaxError(`Unclosed parenthesis in segment '${name}'`);
      i++;
      args = parseArgs(inner, query);
    }
    if (name !== '' || args) segments.push({ name, key: name.toLowerCase(), args });
    if (path[i] === '/') i++;
    else if (i < path.length) throw new ODataSyntaxError(`Unexpected '${path[i]}' after segment '${name}'`);
  }
  return segments;
}

function splitTopLevel(inner: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === "'") {
      if (quoted && inner[i + 1] === "'") {
        cur += "''";
        i++;
        continue;
      }
      quoted = !quoted;
    }
    if (c === ',' && !quoted) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  if (cur.trim() !== '' || parts.length) parts.push(cur);
  return parts;
}

function parseArgs(inner: string, query: URLSearchParams): { positional: ODataValue[]; named: Record<string, ODataValue> } {
  const positional: ODataValue[] = [];
  const named: Record<string, ODataValue> = {};
  for (const raw of splitTopLevel(inner)) {
    const part = raw.trim();
    const eq = part.match(/^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([\s\S]*)$/);
    if (eq) named[eq[1].toLowerCase()] = parseLiteral(eq[2], query);
    else positional.push(parseLiteral(part, query));
  }
  return { positional, named };
}

/** One OData literal: 'string', guid'…', number, true/false, null, or an @alias from the query string. */
export function parseLiteral(text: string, query: URLSearchParams): ODataValue {
  const t = text.trim();
  if (t.startsWith('@')) {
    const aliased = query.get(t);
    if (aliased === null) throw new ODataSyntaxError(`Parameter alias ${t} has no value in the query string`);
    return parseLiteral(aliased, query);
  }
  const guid = t.match(/^guid'([0-9a-fA-F-]{36})'$/);
  if (guid) return guid[1].toLowerCase();
  if (t.startsWith("'") && t.endsWith("'") && t.length >= 2) return t.slice(1, -1).replace(/''/g, "'");
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (/^true$/i.test(t)) return true;
  if (/^false$/i.test(t)) return false;
  if (/^null$/i.test(t)) return null;
  throw new ODataSyntaxError(`Cannot read the literal ${t}`);
}

/** The argument named `name` (case-insensitive) or the positional one at `index`. */
export function arg(segment: Segment, name: string, index = 0): ODataValue | undefined {
  const named = segment.args?.named[name.toLowerCase()];
  if (named !== undefined) return named;
  return segment.args?.positional[index];
}

// ---- answer formats ------------------------------------------------------------------------------

export type Format = 'verbose' | 'minimal' | 'none';

/** SharePoint Online picks the format from Accept; plain application/json is minimal metadata. */
export function formatOf(accept: string | undefined): Format {
  const a = (accept ?? '').toLowerCase();
  if (a.includes('odata=verbose')) return 'verbose';
  if (a.includes('odata=nometadata')) return 'none';
  return 'minimal';
}

export function contentTypeOf(format: Format): string {
  return `application/json;odata=${format === 'verbose' ? 'verbose' : format === 'none' ? 'nometadata' : 'minimalmetadata'};streaming=true;charset=utf-8`;
}

/** An entity as the simulator holds it before formatting. */
export interface Entity {
  type: string;
  /** Canonical URI of the entity (absolute). */
  uri: string;
  /** `__metadata.id` when it differs from uri (list items use their GUID). */
  id?: string;
  etag?: string;
  props: Record<string, unknown>;
  /** Navigation properties: deferred unless expanded (then an Entity or an Entity[]). */
  /** Built only when expanded: entities refer to each other (a file's list item has the file). */
  nav?: Record<string, () => Entity | Entity[] | null | undefined>;
}

export interface ShapeOptions {
  format: Format;
  select?: string[];
  expand?: string[];
  webUrl: string;
}

function selectedKeys(select: string[] | undefined, prefix: string): Set<string> | undefined {
  if (!select || select.length === 0) return undefined;
  const keys = new Set<string>();
  for (const s of select) {
    if (prefix && !s.toLowerCase().startsWith(prefix.toLowerCase() + '/')) continue;
    const rest = prefix ? s.slice(prefix.length + 1) : s;
    keys.add(rest.split('/')[0].toLowerCase());
  }
  // Nothing selected for this level (or '*'): all its properties.
  if (keys.has('*') || keys.size === 0) return undefined;
  return keys;
}

function expandedKeys(expand: string[] | undefined, prefix: string): Set<string> {
  const keys = new Set<string>();
  for (const e of expand ?? []) {
    if (prefix && !e.toLowerCase().startsWith(prefix.toLowerCase() + '/')) continue;
    const rest = prefix ? e.slice(prefix.length + 1) : e;
    keys.add(rest.split('/')[0].toLowerCase());
  }
  return keys;
}

function shapeEntity(entity: Entity, options: ShapeOptions, prefix = '', inCollection = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const selected = selectedKeys(options.select, prefix);
  const expanded = expandedKeys(options.expand, prefix);
  if (options.format === 'verbose') {
    out.__metadata = { id: entity.id ?? entity.uri, uri: entity.uri, ...(entity.etag ? { etag: entity.etag } : {}), type: entity.type };
  } else if (options.format === 'minimal') {
    if (!inCollection && !prefix) out['odata.metadata'] = `${options.webUrl}/_api/$metadata#${entity.type}`;
    out['odata.type'] = entity.type;
    out['odata.id'] = entity.uri;
    if (entity.etag) out['odata.etag'] = entity.etag;
    out['odata.editLink'] = entity.uri.replace(/^.*?\/_api\//, '');
  }
  for (const [name, lazy] of Object.entries(entity.nav ?? {})) {
    const key = name.toLowerCase();
    if (expanded.has(key)) {
      const nav = lazy();
      const sub = prefix ? `${prefix}/${name}` : name;
      if (Array.isArray(nav)) {
        const items = nav.map((n) => shapeEntity(n, options, sub, true));
        out[name] = options.format === 'verbose' ? { results: items } : items;
      } else out[name] = nav ? shapeEntity(nav, options, sub, true) : null;
    } else if (options.format === 'verbose' && (!selected || selected.has(key))) {
      out[name] = { __deferred: { uri: `${entity.uri}/${name}` } };
    }
  }
  for (const [name, value] of Object.entries(entity.props)) {
    if (selected && !selected.has(name.toLowerCase())) continue;
    out[name] = options.format === 'verbose' && Array.isArray(value) ? { __metadata: { type: 'Collection(Edm.String)' }, results: value } : value;
  }
  return out;
}

/** The body of a single-entity answer. */
export function entityBody(entity: Entity, options: ShapeOptions): unknown {
  const shaped = shapeEntity(entity, options);
  return options.format === 'verbose' ? { d: shaped } : shaped;
}

/** The body of a collection answer; `next` is the absolute URL of the next page. */
export function collectionBody(type: string, entities: Entity[], options: ShapeOptions, next?: string): unknown {
  const items = entities.map((e) => shapeEntity(e, options, '', true));
  if (options.format === 'verbose') return { d: { results: items, ...(next ? { __next: next } : {}) } };
  return {
    ...(options.format === 'minimal' ? { 'odata.metadata': `${options.webUrl}/_api/$metadata#${type}` } : {}),
    value: items,
    ...(next ? { 'odata.nextLink': next } : {}),
  };
}

/** A method's primitive answer: `{"d":{"StartUpload":"10"}}` or `{"odata.metadata":"…#Edm.Int64","value":"10"}`. */
export function primitiveBody(method: string, edmType: string, value: unknown, options: ShapeOptions): unknown {
  if (options.format === 'verbose') return { d: { [method]: value } };
  return { ...(options.format === 'minimal' ? { 'odata.metadata': `${options.webUrl}/_api/$metadata#${edmType}` } : {}), value };
}

/** SharePoint's error body: verbose `error`, JSON light `odata.error`; `message` is an object. */
export function errorBody(format: Format, code: string, message: string): unknown {
  const inner = { code, message: { lang: 'en-US', value: message } };
  return format === 'verbose' ? { error: inner } : { 'odata.error': inner };
}
