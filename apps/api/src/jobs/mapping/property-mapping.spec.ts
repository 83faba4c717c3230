import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { PropertyDefinition } from '@gateway/connector-api';
import { JobDefinitionDto } from '../../config/job-definition.dto';
import { propertiesProblem, stringMapProblem, type PropertyMapping } from '../../config/property-mapping.dto';
import { checkAgainstTarget, compileMapping, isoDate, mapDocument, TransformError, unmappedProperties, valueProblem } from './property-mapping';

function map(mapping: PropertyMapping, properties: Record<string, string | null>, typeId?: string) {
  return mapDocument(compileMapping(mapping), { properties, ...(typeId ? { typeId } : {}) });
}

function valueOf(transform: unknown, value: string): unknown {
  const doc = map({ properties: { p: { to: 'q', transform } as never } }, { p: value });
  if (doc.failure) return { failure: doc.failure };
  return doc.properties.get('q');
}

describe('property mapping engine', () => {
  it('renames, keeps the value, and reports mapped and unmapped names', () => {
    const doc = map({ properties: { 'cm:title': 'Title' } }, { 'cm:title': 'Report', other: 'x', empty: '', gone: null });
    expect(doc.properties).toEqual(new Map([['Title', 'Report']]));
    expect(doc.mapped).toEqual(['cm:title']);
    expect(doc.unmapped).toEqual(['other']);
    expect(doc.kept).toEqual(new Map([['other', 'x']]));
  });

  it('applies every transform, in order', () => {
    expect(valueOf('lowercase', 'AbC')).toBe('abc');
    expect(valueOf('uppercase', 'AbC')).toBe('ABC');
    expect(valueOf('trim', '  a b  ')).toBe('a b');
    expect(valueOf('date', '2026-03-01T14:05:09+02:00')).toBe('2026-03-01T12:05:09.000Z');
    expect(valueOf({ split: ';' }, 'a;b;;c')).toEqual(['a', 'b', 'c']);
    expect(valueOf([{ split: ';' }, { join: ' | ' }], 'a;b')).toBe('a | b');
    expect(valueOf({ join: '-' }, 'single')).toBe('single');
    expect(valueOf({ replace: { from: '.*', to: '_' } }, 'a.*b.*c')).toBe('a_b_c');
    expect(valueOf([{ split: ',' }, 'trim', 'uppercase'], ' a , b ')).toEqual(['A', 'B']);
    expect(valueOf([{ split: ',' }, 'date'], '2026-01-01,0')).toEqual(['2026-01-01T00:00:00.000Z', '1970-01-01T00:00:00.000Z']);
  });

  it('reads dates as ISO 8601 with a zone, a bare date as UTC midnight, or epoch milliseconds; refuses the rest naming the property', () => {
    expect(isoDate('2026-03-01')).toBe('2026-03-01T00:00:00.000Z');
    expect(isoDate('2026-03-01T10:00Z')).toBe('2026-03-01T10:00:00.000Z');
    expect(isoDate('2026-03-01T10:00:00.123-0130')).toBe('2026-03-01T11:30:00.123Z');
    expect(isoDate('1772359509000')).toBe('2026-03-01T10:05:09.000Z');
    expect(() => isoDate('2026-03-01T10:00:00')).toThrow(new TransformError("'2026-03-01T10:00:00' has no time zone (add Z or ±hh:mm)"));
    expect(() => isoDate('yesterday')).toThrow(TransformError);
    expect(() => isoDate('2026-13-45')).toThrow(TransformError);
    expect(valueOf('date', 'soon')).toEqual({ failure: "PROPERTY_TRANSFORM: property 'p': 'soon' is not an ISO 8601 date or date-time, nor epoch milliseconds" });
  });

  it('uses the default when the source has no value, and constants win over mapped values', () => {
    const doc = map({ properties: { a: { to: 'A', default: 'none' }, b: 'B' }, constants: { B: 'fixed', Tag: 'wave-1' } }, { b: 'from source', a: '' });
    expect(doc.properties).toEqual(new Map([['A', 'none'], ['B', 'fixed'], ['Tag', 'wave-1']]));
  });

  it('maps the type by the source type id, and leaves other types alone', () => {
    expect(map({ types: { 'cmis:document': 'SP.File' } }, {}, 'cmis:document').type).toBe('SP.File');
    expect(map({ types: { 'cmis:document': 'SP.File' } }, {}, 'D:other').type).toBeUndefined();
  });

  it('follows unmapped: keep, drop, fail (naming the first unmapped property)', () => {
    const props = { mapped: 'm', z: '1', y: '2' };
    expect([...map({ properties: { mapped: 'M' } }, props).kept.keys()]).toEqual(['z', 'y']);
    expect(map({ properties: { mapped: 'M' }, unmapped: 'drop' }, props).kept.size).toBe(0);
    const failed = map({ properties: { mapped: 'M' }, unmapped: 'fail' }, props);
    expect(failed.failure).toBe("UNMAPPED_PROPERTY: property 'z' is not mapped (mapping.unmapped is fail)");
    expect(map({ properties: { mapped: 'M' }, unmapped: 'fail' }, { mapped: 'm', blank: '' }).failure).toBeUndefined();
  });

  it('gives the dry run the mapped and unmapped names without writing anything', () => {
    expect(unmappedProperties(compileMapping({ properties: { a: 'A' } }), { properties: { a: '1', b: '2', c: null } })).toEqual({ mapped: ['a'], unmapped: ['b'] });
    expect(unmappedProperties(compileMapping({}), {})).toEqual({ mapped: [], unmapped: [] });
    // The job's stored option as it is.
    expect(unmappedProperties({ properties: { b: 'B' }, unmapped: 'fail' }, { properties: { a: '1', b: '2' } })).toEqual({ mapped: ['b'], unmapped: ['a'] });
  });
});

describe('checking values against the target', () => {
  const schema = new Map<string, PropertyDefinition>(
    [
      { name: 'Title', kind: 'string', multiValue: false, writable: true, maxLength: 5 },
      { name: 'Count', kind: 'number', multiValue: false, writable: true },
      { name: 'When', kind: 'date', multiValue: false, writable: true },
      { name: 'Flag', kind: 'boolean', multiValue: false, writable: true },
      { name: 'Tags', kind: 'string', multiValue: true, writable: true },
      { name: 'Locked', kind: 'string', multiValue: false, writable: false },
    ].map((p) => [p.name, p as PropertyDefinition]),
  );
  const check = (properties: Record<string, string>, mapping: PropertyMapping = {}) =>
    checkAgainstTarget(map({ properties: Object.fromEntries(Object.keys(properties).map((k) => [k, k])), ...mapping }, properties), schema);

  it('writes accepted values, multi-values comma-joined', () => {
    expect(check({ Title: 'abc', Count: '12.5', When: '2026-01-01T00:00:00Z', Flag: 'true' })).toEqual({ properties: { Title: 'abc', Count: '12.5', When: '2026-01-01T00:00:00Z', Flag: 'true' } });
    expect(checkAgainstTarget(map({ properties: { t: { to: 'Tags', transform: { split: ';' } } } }, { t: 'a;b' }), schema)).toEqual({ properties: { Tags: 'a,b' } });
  });

  it('refuses a wrong kind, a too long text, a read-only or unknown property, naming it and the reason', () => {
    expect(check({ Count: 'twelve' }).refused).toBe("PROPERTY_REFUSED: property 'Count': 'twelve' is not a number");
    expect(check({ Title: 'too long' }).refused).toBe("PROPERTY_REFUSED: property 'Title': 8 characters, the target takes at most 5");
    expect(check({ Locked: 'x' }).refused).toBe("PROPERTY_REFUSED: property 'Locked': read-only at the target");
    expect(check({ Nope: 'x' }).refused).toBe("PROPERTY_REFUSED: property 'Nope': the target has no such property");
    expect(check({ Flag: 'yes' }).refused).toBe("PROPERTY_REFUSED: property 'Flag': 'yes' is not true or false");
    expect(check({ When: 'later' }).refused).toBe("PROPERTY_REFUSED: property 'When': 'later' is not a date (ISO 8601 or epoch milliseconds)");
    expect(checkAgainstTarget(map({ properties: { t: { to: 'Title', transform: { split: ';' } } } }, { t: 'a;b' }), schema).refused).toBe(
      "PROPERTY_REFUSED: property 'Title': 2 values for a single-value property",
    );
    expect(checkAgainstTarget(map({ properties: { t: { to: 'Tags', transform: { split: ';' } } } }, { t: 'a,1;b' }), schema).refused).toMatch(/property 'Tags': a value of a multi-value contains a comma/);
  });

  it('keeps same-name properties only where the target declares them writable and takes the value', () => {
    const doc = map({}, { Title: 'ok', Locked: 'x', Unknown: 'u', Count: 'NaN?' });
    expect(checkAgainstTarget(doc, schema)).toEqual({ properties: { Title: 'ok' } });
    // A target that cannot tell gets every kept property, and may refuse at the write.
    expect(checkAgainstTarget(doc, undefined)).toEqual({ properties: { Title: 'ok', Locked: 'x', Unknown: 'u', Count: 'NaN?' } });
  });

  it('valueProblem reads a string as comma-separated values for a multi-value property only', () => {
    expect(valueProblem(schema.get('Tags'), 'a,b')).toBeUndefined();
    expect(valueProblem(schema.get('Count'), '1,2')).toBe("'1,2' is not a number");
    expect(valueProblem(schema.get('Count'), ['1', '2'])).toBe('2 values for a single-value property');
  });
});

describe('mapping validation (definition time)', () => {
  function firstError(mapping: unknown): string | undefined {
    const dto = plainToInstance(JobDefinitionDto, { jobName: 'j', source: { connectorId: 'a', folderPath: '/' }, target: { connectorId: 'b', folderPath: '/' }, options: { mapping } });
    const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true });
    const walk = (es: typeof errors): string | undefined => {
      for (const e of es) {
        if (e.constraints) return Object.values(e.constraints)[0];
        const inner = walk(e.children ?? []);
        if (inner) return inner;
      }
      return undefined;
    };
    return walk(errors);
  }

  it('accepts a full mapping', () => {
    expect(
      firstError({
        properties: { a: 'A', b: { to: 'B', default: '', transform: ['trim', { split: ';' }, { join: ',' }, { replace: { from: 'x', to: '' } }, 'date', 'lowercase', 'uppercase'] } },
        constants: { Tag: 'wave-1' },
        types: { 'cmis:document': 'SP.File' },
        unmapped: 'fail',
      }),
    ).toBeUndefined();
  });

  it('names unknown keys at every level', () => {
    expect(firstError({ propertiez: {} })).toBe('property propertiez should not exist');
    expect(propertiesProblem({ a: { to: 'A', tranform: 'trim', x: 1 } })).toBe("unknown keys 'properties.a.tranform', 'properties.a.x' (known: to, default, transform)");
    expect(firstError({ properties: { a: { too: 'A' } } })).toBe("unknown key 'properties.a.too' (known: to, default, transform)");
    expect(propertiesProblem({ a: { transform: { replace: { from: 'a', to: 'b', regex: true } } } })).toBe("properties.a.transform: unknown key 'replace.regex' (known: from, to)");
    expect(propertiesProblem({ a: { transform: { regex: 'x' } } })).toMatch(/^properties\.a\.transform: unknown transform 'regex' \(known: lowercase, uppercase, trim, date, /);
  });

  it('refuses bad transforms and values with a reason', () => {
    expect(propertiesProblem({ a: { transform: 'titlecase' } })).toMatch(/unknown transform 'titlecase'/);
    expect(propertiesProblem({ a: { transform: 'split' } })).toBe('properties.a.transform: \'split\' takes an argument, e.g. { "split": ";" }');
    expect(propertiesProblem({ a: { transform: { split: '' } } })).toBe('properties.a.transform: split takes a separator, a non-empty string of at most 100 characters');
    expect(propertiesProblem({ a: { transform: { split: ';', join: ',' } } })).toBe('properties.a.transform: one transform per object');
    expect(propertiesProblem({ a: { transform: [] } })).toBe('properties.a.transform must have 1 to 10 transforms');
    expect(propertiesProblem({ a: { transform: { replace: { from: '', to: 'b' } } } })).toMatch(/replace.from must be a non-empty string/);
    expect(propertiesProblem({ a: 7 })).toBe('properties.a must be a target property name or an object with to, default, transform');
    expect(propertiesProblem({ a: '' })).toBe('properties.a must be a target property name (1 to 255 characters)');
    expect(propertiesProblem([])).toBe('properties must be an object');
    expect(propertiesProblem(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`p${i}`, 'x'])))).toBe('properties has 1001 entries (at most 1000)');
    expect(stringMapProblem({ Tag: 3 }, 'constants')).toBe('constants.Tag must be a string of at most 4000 characters');
    expect(stringMapProblem({ a: '' }, 'types')).toMatch(/^types\.a must be a target type/);
    expect(firstError({ unmapped: 'ignore' })).toBe('unmapped must be one of keep, drop, fail');
    expect(firstError('all')).toBe('mapping must be an object');
  });
});
