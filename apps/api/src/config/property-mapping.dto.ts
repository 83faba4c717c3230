import { ApiPropertyOptional } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { IsIn, IsOptional, registerDecorator, type ValidationOptions } from 'class-validator';

/**
 * A job's property and type mapping (`options.mapping`; jobs README, "Property and type mapping").
 * Validated here, at definition time; applied by apps/api/src/jobs/mapping/. In config/ because the
 * job definition DTO, which config/ owns and every module reads, refers to it.
 */

export const UNMAPPED_MODES = ['keep', 'drop', 'fail'] as const;
export type UnmappedMode = (typeof UNMAPPED_MODES)[number];

/** Transforms without an argument, given as their name. */
export const PLAIN_TRANSFORMS = ['lowercase', 'uppercase', 'trim', 'date'] as const;
/** Transforms with an argument, given as a one-key object: `{ "split": ";" }`, `{ "join": ", " }`, `{ "replace": { "from": "a", "to": "b" } }`. */
export const ARGUMENT_TRANSFORMS = ['split', 'join', 'replace'] as const;

export type PlainTransform = (typeof PLAIN_TRANSFORMS)[number];
export type TransformStep = PlainTransform | { split: string } | { join: string } | { replace: { from: string; to: string } };

/** A source property's rule: the target name, or where it goes, its value when the source has none, and its transforms (in order). */
export type PropertyRule = string | { to?: string; default?: string; transform?: TransformStep | TransformStep[] };

export interface PropertyMapping {
  properties?: Record<string, PropertyRule>;
  constants?: Record<string, string>;
  types?: Record<string, string>;
  unmapped?: UnmappedMode;
}

/** Limits that keep a definition (stored as JSON, applied per document) small. */
export const MAPPING_LIMITS = { entries: 1000, nameLength: 255, valueLength: 4000, transforms: 10 } as const;

const RULE_KEYS = ['to', 'default', 'transform'];
const REPLACE_KEYS = ['from', 'to'];

/** Why `value` is not a `properties` map, or undefined when it is. Every unknown key is named. */
export function propertiesProblem(value: unknown): string | undefined {
  const entries = mapEntries(value, 'properties');
  if (typeof entries === 'string') return entries;
  for (const [name, rule] of entries) {
    if (typeof rule === 'string') {
      if (!isName(rule)) return `properties.${name} must be a target property name (1 to ${MAPPING_LIMITS.nameLength} characters)`;
      continue;
    }
    if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) return `properties.${name} must be a target property name or an object with to, default, transform`;
    const unknown = Object.keys(rule).filter((k) => !RULE_KEYS.includes(k));
    if (unknown.length > 0) return `unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `'properties.${name}.${k}'`).join(', ')} (known: ${RULE_KEYS.join(', ')})`;
    const r = rule as Record<string, unknown>;
    if (r.to !== undefined && !isName(r.to)) return `properties.${name}.to must be a target property name (1 to ${MAPPING_LIMITS.nameLength} characters)`;
    if (r.default !== undefined && !isValue(r.default)) return `properties.${name}.default must be a string of at most ${MAPPING_LIMITS.valueLength} characters`;
    if (r.transform !== undefined) {
      const problem = transformProblem(r.transform, `properties.${name}.transform`);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** Why `value` is not a map of names to strings (`constants`, `types`), or undefined when it is. */
export function stringMapProblem(value: unknown, field: 'constants' | 'types'): string | undefined {
  const entries = mapEntries(value, field);
  if (typeof entries === 'string') return entries;
  for (const [name, v] of entries) {
    if (field === 'types' ? !isName(v) : !isValue(v)) {
      return field === 'types'
        ? `types.${name} must be a target type (a key of the target's types call, 1 to ${MAPPING_LIMITS.nameLength} characters)`
        : `constants.${name} must be a string of at most ${MAPPING_LIMITS.valueLength} characters`;
    }
  }
  return undefined;
}

function mapEntries(value: unknown, field: string): Array<[string, unknown]> | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `${field} must be an object`;
  const entries = Object.entries(value);
  if (entries.length > MAPPING_LIMITS.entries) return `${field} has ${entries.length} entries (at most ${MAPPING_LIMITS.entries})`;
  const badName = entries.find(([name]) => !isName(name));
  if (badName) return `${field} has a name of ${badName[0].length} characters (1 to ${MAPPING_LIMITS.nameLength})`;
  return entries;
}

function transformProblem(value: unknown, at: string): string | undefined {
  const steps: unknown[] = Array.isArray(value) ? value : [value];
  if (steps.length === 0 || steps.length > MAPPING_LIMITS.transforms) return `${at} must have 1 to ${MAPPING_LIMITS.transforms} transforms`;
  const known = `known: ${[...PLAIN_TRANSFORMS, ...ARGUMENT_TRANSFORMS.map((t) => `{ "${t}": … }`)].join(', ')}`;
  for (const step of steps) {
    if (typeof step === 'string') {
      if ((PLAIN_TRANSFORMS as readonly string[]).includes(step)) continue;
      if ((ARGUMENT_TRANSFORMS as readonly string[]).includes(step)) return `${at}: '${step}' takes an argument, e.g. { "${step}": ${step === 'replace' ? '{ "from": "a", "to": "b" }' : '";"'} }`;
      return `${at}: unknown transform '${step}' (${known})`;
    }
    if (step === null || typeof step !== 'object' || Array.isArray(step)) return `${at}: a transform is a name or a one-key object (${known})`;
    const keys = Object.keys(step);
    if (keys.length !== 1 || !(ARGUMENT_TRANSFORMS as readonly string[]).includes(keys[0])) {
      const unknown = keys.filter((k) => !(ARGUMENT_TRANSFORMS as readonly string[]).includes(k));
      return unknown.length > 0 ? `${at}: unknown transform${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `'${k}'`).join(', ')} (${known})` : `${at}: one transform per object`;
    }
    const arg = (step as Record<string, unknown>)[keys[0]];
    if (keys[0] === 'replace') {
      if (arg === null || typeof arg !== 'object' || Array.isArray(arg)) return `${at}: replace takes { "from": "…", "to": "…" }`;
      const unknown = Object.keys(arg).filter((k) => !REPLACE_KEYS.includes(k));
      if (unknown.length > 0) return `${at}: unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `'replace.${k}'`).join(', ')} (known: from, to)`;
      const { from, to } = arg as Record<string, unknown>;
      if (typeof from !== 'string' || from === '' || from.length > MAPPING_LIMITS.valueLength) return `${at}: replace.from must be a non-empty string of at most ${MAPPING_LIMITS.valueLength} characters`;
      if (!isValue(to)) return `${at}: replace.to must be a string of at most ${MAPPING_LIMITS.valueLength} characters`;
    } else if (typeof arg !== 'string' || arg === '' || arg.length > 100) {
      return `${at}: ${keys[0]} takes a separator, a non-empty string of at most 100 characters`;
    }
  }
  return undefined;
}

function isName(v: unknown): v is string {
  return typeof v === 'string' && v.length >= 1 && v.length <= MAPPING_LIMITS.nameLength;
}

function isValue(v: unknown): v is string {
  return typeof v === 'string' && v.length <= MAPPING_LIMITS.valueLength;
}

function checkedBy(name: string, problem: (value: unknown) => string | undefined, options: ValidationOptions = {}): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: { validate: (value: unknown) => problem(value) === undefined, defaultMessage: (args) => problem(args?.value) ?? `${args?.property} is invalid` },
    });
}

const SEPARATOR_SCHEMA: SchemaObject = { type: 'string', minLength: 1, maxLength: 100 };
/** One transform step as OpenAPI says it: a plain name, or a one-key object with its argument. */
const TRANSFORM_STEP_SCHEMA: SchemaObject = {
  oneOf: [
    { type: 'string', enum: [...PLAIN_TRANSFORMS] },
    { type: 'object', required: ['split'], additionalProperties: false, properties: { split: SEPARATOR_SCHEMA } },
    { type: 'object', required: ['join'], additionalProperties: false, properties: { join: SEPARATOR_SCHEMA } },
    {
      type: 'object',
      required: ['replace'],
      additionalProperties: false,
      properties: {
        replace: {
          type: 'object',
          required: ['from', 'to'],
          additionalProperties: false,
          properties: { from: { type: 'string', minLength: 1, maxLength: MAPPING_LIMITS.valueLength }, to: { type: 'string', maxLength: MAPPING_LIMITS.valueLength } },
        },
      },
    },
  ],
};

export class PropertyMappingDto implements PropertyMapping {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: {
      oneOf: [
        { type: 'string', minLength: 1, maxLength: MAPPING_LIMITS.nameLength },
        {
          type: 'object',
          additionalProperties: false,
          properties: {
            to: { type: 'string', minLength: 1, maxLength: MAPPING_LIMITS.nameLength, description: 'Target property; default: the same name' },
            default: { type: 'string', maxLength: MAPPING_LIMITS.valueLength, description: 'Value written when the source has none (absent, null or empty)' },
            transform: {
              oneOf: [TRANSFORM_STEP_SCHEMA, { type: 'array', minItems: 1, maxItems: MAPPING_LIMITS.transforms, items: TRANSFORM_STEP_SCHEMA }],
              description:
                `One transform or a list of at most ${MAPPING_LIMITS.transforms}, applied in order: ${PLAIN_TRANSFORMS.join(', ')} (ISO 8601 or epoch milliseconds in, ISO 8601 UTC out), ` +
                '{ "split": sep } (to a multi-value), { "join": sep }, { "replace": { "from", "to" } } (literal, every occurrence)',
              example: ['trim', { split: ';' }],
            },
          },
        },
      ],
    },
    maxProperties: MAPPING_LIMITS.entries,
    example: { 'cm:title': 'Title', 'cm:created': { to: 'DocDate', transform: 'date' }, keywords: { to: 'Tags', transform: [{ split: ';' }, 'trim'] } },
    description: `Source property → target property (a name, or { to, default, transform }); at most ${MAPPING_LIMITS.entries} entries`,
  })
  @IsOptional()
  @checkedBy('isPropertyRules', propertiesProblem)
  properties?: Record<string, PropertyRule>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: MAPPING_LIMITS.valueLength },
    maxProperties: MAPPING_LIMITS.entries,
    example: { MigrationTag: 'wave-1' },
    description: 'Target property → fixed value set on every document (wins over a mapped value of the same target property)',
  })
  @IsOptional()
  @checkedBy('isConstants', (v) => stringMapProblem(v, 'constants'))
  constants?: Record<string, string>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', minLength: 1, maxLength: MAPPING_LIMITS.nameLength },
    maxProperties: MAPPING_LIMITS.entries,
    example: { 'cmis:document': 'SP.File' },
    description: "Source type → target type (keys of each side's types call); a document of another type is written with the target's default type",
  })
  @IsOptional()
  @checkedBy('isTypeMap', (v) => stringMapProblem(v, 'types'))
  types?: Record<string, string>;

  @ApiPropertyOptional({
    enum: UNMAPPED_MODES,
    default: 'keep',
    description:
      'Source properties that `properties` does not name: `keep` writes those the target declares writable under the same name, ' +
      '`drop` writes none, `fail` fails the document (e) naming the first',
  })
  @IsOptional()
  @IsIn(UNMAPPED_MODES, { message: `unmapped must be one of ${UNMAPPED_MODES.join(', ')}` })
  unmapped?: UnmappedMode;
}
