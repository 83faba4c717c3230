import type { PropertyDefinition } from '@gateway/connector-api';
import type { PropertyMapping, PropertyRule, TransformStep, UnmappedMode } from '../../config/property-mapping.dto';

/**
 * The property and type mapping of a job, as pure functions: a source document's properties in,
 * the target's properties out (mapDocument), checked against what the target declares
 * (checkAgainstTarget). No I/O here: mapped-properties.ts does the calls, the dry run asks
 * unmappedProperties. Multi-values travel as lists here and as the gateway's comma-joined
 * strings at the connectors (what ItemInfo.properties and updateProperties carry).
 */

export type PropertyValue = string | string[];

/** The source side of a document: its type and its custom properties, as a connector's getItem reports them. */
export interface SourceDocument {
  typeId?: string;
  properties?: Record<string, string | null>;
}

interface CompiledRule {
  to: string;
  default?: string;
  steps: Array<(value: PropertyValue) => PropertyValue>;
}

/** A mapping made ready once per run: rules by source name, transforms as functions. */
export interface CompiledMapping {
  rules: Map<string, CompiledRule>;
  constants: Array<[string, string]>;
  types: Map<string, string>;
  unmapped: UnmappedMode;
}

/** A value a transform cannot take; the document fails naming the property. */
export class TransformError extends Error {}

export function compileMapping(mapping: PropertyMapping): CompiledMapping {
  const rules = new Map<string, CompiledRule>();
  for (const [source, rule] of Object.entries(mapping.properties ?? {})) rules.set(source, compileRule(source, rule));
  return {
    rules,
    constants: Object.entries(mapping.constants ?? {}),
    types: new Map(Object.entries(mapping.types ?? {})),
    unmapped: mapping.unmapped ?? 'keep',
  };
}

function compileRule(source: string, rule: PropertyRule): CompiledRule {
  if (typeof rule === 'string') return { to: rule, steps: [] };
  const transforms = rule.transform === undefined ? [] : Array.isArray(rule.transform) ? rule.transform : [rule.transform];
  return { to: rule.to ?? source, ...(rule.default !== undefined ? { default: rule.default } : {}), steps: transforms.map(compileStep) };
}

function compileStep(step: TransformStep): (value: PropertyValue) => PropertyValue {
  if (step === 'lowercase') return each((v) => v.toLowerCase());
  if (step === 'uppercase') return each((v) => v.toUpperCase());
  if (step === 'trim') return each((v) => v.trim());
  if (step === 'date') return each(isoDate);
  if ('split' in step) {
    const separator = step.split;
    return (value) => (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(separator)).filter((v) => v !== '');
  }
  if ('join' in step) {
    const separator = step.join;
    return (value) => (Array.isArray(value) ? value.join(separator) : value);
  }
  const { from, to } = step.replace;
  return each((v) => v.split(from).join(to));
}

function each(f: (v: string) => string): (value: PropertyValue) => PropertyValue {
  return (value) => (Array.isArray(value) ? value.map(f) : f(value));
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * ISO 8601 in (a date-time with its zone, or a date: midnight UTC), or epoch milliseconds (what a
 * CMIS source reports), ISO 8601 UTC out. A date-time without a zone is refused: which zone it
 * meant cannot be known, and a migration must not shift dates silently.
 */
export function isoDate(value: string): string {
  const v = value.trim();
  let ms: number;
  if (/^-?\d+$/.test(v)) ms = Number(v);
  else if (ISO_DATE.test(v)) ms = Date.parse(`${v}T00:00:00Z`);
  else if (ISO_DATE_TIME.test(v)) ms = Date.parse(v);
  else if (/^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(v)) throw new TransformError(`'${value}' has no time zone (add Z or ±hh:mm)`);
  else throw new TransformError(`'${value}' is not an ISO 8601 date or date-time, nor epoch milliseconds`);
  const date = new Date(ms);
  if (!Number.isFinite(ms) || Number.isNaN(date.getTime())) throw new TransformError(`'${value}' is not a valid date`);
  return date.toISOString();
}

/** A source document's properties mapped: what to write at the target, or why the document fails. */
export interface MappedDocument {
  /** Target property → value: mapped properties and constants. The target must accept each. */
  properties: Map<string, PropertyValue>;
  /** Same-name properties kept under `unmapped: keep`: written where the target declares them writable. */
  kept: Map<string, string>;
  /** The target type (createFile's `type`), when `types` maps the source's. */
  type?: string;
  /** Source properties a rule names / no rule names (non-empty values only). */
  mapped: string[];
  unmapped: string[];
  /** Set when the document fails: an unmapped property under `fail`, or a value a transform refused. */
  failure?: string;
}

/** The source properties that carry a value. */
function valuedProperties(doc: SourceDocument): Array<[string, string]> {
  return Object.entries(doc.properties ?? {}).filter((e): e is [string, string] => e[1] !== null && e[1] !== '');
}

const compiledByMapping = new WeakMap<PropertyMapping, CompiledMapping>();

/**
 * The mapped and unmapped property names of a document (a source getItem's answer), without writing
 * anything: what a dry run reports. Takes the job's `options.mapping` as stored (compiled once per
 * mapping object) or a compiled one.
 */
export function unmappedProperties(mapping: PropertyMapping | CompiledMapping, doc: SourceDocument): { mapped: string[]; unmapped: string[] } {
  const rules = isCompiled(mapping) ? mapping.rules : compiledOnce(mapping).rules;
  const mapped: string[] = [];
  const unmapped: string[] = [];
  for (const [name] of valuedProperties(doc)) (rules.has(name) ? mapped : unmapped).push(name);
  return { mapped, unmapped };
}

function isCompiled(mapping: PropertyMapping | CompiledMapping): mapping is CompiledMapping {
  return (mapping as Partial<CompiledMapping>).rules instanceof Map;
}

function compiledOnce(mapping: PropertyMapping): CompiledMapping {
  let compiled = compiledByMapping.get(mapping);
  if (!compiled) compiledByMapping.set(mapping, (compiled = compileMapping(mapping)));
  return compiled;
}

export function mapDocument(mapping: CompiledMapping, doc: SourceDocument): MappedDocument {
  const { mapped, unmapped } = unmappedProperties(mapping, doc);
  const out: MappedDocument = { properties: new Map(), kept: new Map(), mapped, unmapped };
  const type = doc.typeId !== undefined ? mapping.types.get(doc.typeId) : undefined;
  if (type !== undefined) out.type = type;
  if (mapping.unmapped === 'fail' && unmapped.length > 0) {
    out.failure = `UNMAPPED_PROPERTY: property '${unmapped[0]}' is not mapped (mapping.unmapped is fail)`;
    return out;
  }
  const source = doc.properties ?? {};
  for (const [name, rule] of mapping.rules) {
    const raw = source[name];
    let value: PropertyValue | undefined = raw === null || raw === undefined || raw === '' ? rule.default : raw;
    if (value === undefined) continue;
    try {
      for (const step of rule.steps) value = step(value);
    } catch (e) {
      if (!(e instanceof TransformError)) throw e;
      out.failure = `PROPERTY_TRANSFORM: property '${name}': ${e.message}`;
      return out;
    }
    out.properties.set(rule.to, value);
  }
  for (const [name, value] of mapping.constants) out.properties.set(name, value);
  if (mapping.unmapped === 'keep') {
    for (const name of unmapped) if (!out.properties.has(name)) out.kept.set(name, source[name]!);
  }
  return out;
}

/** What to write at the target: each property as the connectors take it (a multi-value comma-joined), or why one is refused. */
export interface TargetWrite {
  properties: Record<string, string>;
  /** `PROPERTY_REFUSED: property 'X': reason`, for the first property the target cannot take. */
  refused?: string;
}

/**
 * The mapped values checked against the target's declared properties (`schema`, undefined when the
 * target cannot tell: every value then goes to the target, which may still refuse it at the write).
 * A mapped value or constant the target cannot take refuses the document; a kept same-name property
 * the target does not declare writable is left out (that is what `keep` means).
 */
export function checkAgainstTarget(doc: MappedDocument, schema: ReadonlyMap<string, PropertyDefinition> | undefined): TargetWrite {
  const properties: Record<string, string> = {};
  for (const [name, value] of doc.properties) {
    const reason = schema ? valueProblem(schema.get(name), value) : multiValueProblem(value);
    if (reason) return { properties, refused: `PROPERTY_REFUSED: property '${name}': ${reason}` };
    properties[name] = Array.isArray(value) ? value.join(',') : value;
  }
  for (const [name, value] of doc.kept) {
    if (schema) {
      const definition = schema.get(name);
      if (!definition?.writable || valueProblem(definition, value) !== undefined) continue;
    }
    properties[name] = value;
  }
  return { properties };
}

/** Why the target refuses `value` for a property it declares as `definition` (undefined: it takes it). */
export function valueProblem(definition: PropertyDefinition | undefined, value: PropertyValue): string | undefined {
  if (!definition) return 'the target has no such property';
  if (!definition.writable) return 'read-only at the target';
  const values = Array.isArray(value) ? value : definition.multiValue ? value.split(',') : [value];
  if (!definition.multiValue && values.length > 1) return `${values.length} values for a single-value property`;
  const multi = multiValueProblem(value);
  if (multi) return multi;
  for (const v of values) {
    const problem = kindProblem(definition, v);
    if (problem) return problem;
  }
  return undefined;
}

/** A value of a multi-value cannot hold the comma the connectors join multi-values with. */
function multiValueProblem(value: PropertyValue): string | undefined {
  return Array.isArray(value) && value.some((v) => v.includes(',')) ? 'a value of a multi-value contains a comma, the separator multi-values travel with' : undefined;
}

function kindProblem(definition: PropertyDefinition, v: string): string | undefined {
  switch (definition.kind) {
    case 'number':
      return v.trim() === '' || !Number.isFinite(Number(v)) ? `'${clip(v)}' is not a number` : undefined;
    case 'boolean':
      return v === 'true' || v === 'false' ? undefined : `'${clip(v)}' is not true or false`;
    case 'date':
      return Number.isFinite(/^-?\d+$/.test(v) ? Number(v) : Date.parse(v)) ? undefined : `'${clip(v)}' is not a date (ISO 8601 or epoch milliseconds)`;
    default:
      return definition.maxLength !== undefined && v.length > definition.maxLength ? `${v.length} characters, the target takes at most ${definition.maxLength}` : undefined;
  }
}

function clip(v: string): string {
  return v.length > 40 ? `${v.slice(0, 40)}…` : v;
}

/**
 * An indexing job's custom properties (index fields `prop_<name>`): the mapped values and constants by
 * target name, then the kept ones; an index takes any name, so nothing is checked. Multi-values
 * comma-joined, as the unmapped properties are indexed.
 */
export function indexedProperties(doc: MappedDocument): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of doc.kept) out[name] = value;
  for (const [name, value] of doc.properties) out[name] = Array.isArray(value) ? value.join(',') : value;
  return out;
}
