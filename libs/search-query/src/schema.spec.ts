import { DEFAULT_FIELD_SCHEMA, fieldTypeOf, isValidFieldName } from './schema';

describe('isValidFieldName', () => {
  it('accepts plain names, dotted paths and a leading underscore', () => {
    for (const name of ['content', 'prop_x', 'a.b', '_id', 'A9_z.', '_', 'prop_x_', '_a_b']) expect(isValidFieldName(name)).toBe(true);
  });

  it('refuses operators, functions, local params, Solr magic and internal fields', () => {
    for (const name of ['', '$where', '1a', 'a b', 'sum(a,b)', '{!x}', 'a-b', '_query_', '_val_', '_version_', '__']) {
      expect(isValidFieldName(name)).toBe(false);
    }
  });
});

describe('DEFAULT_FIELD_SCHEMA', () => {
  it('is the mapping the README documents and the indexes are built with, and cannot be changed at run time', () => {
    expect(DEFAULT_FIELD_SCHEMA).toEqual({
      title: 'text',
      name: 'text',
      content: 'text',
      path: 'text',
      id: 'keyword',
      mime_type: 'keyword',
      author: 'keyword',
      tags: 'keyword',
      source_connector: 'keyword',
      source_id: 'keyword',
      acl_read: 'keyword',
      size: 'number',
      created: 'date',
      modified: 'date',
    });
    expect(Object.isFrozen(DEFAULT_FIELD_SCHEMA)).toBe(true);
  });
});

describe('fieldTypeOf', () => {
  it('reads the schema, and makes unknown fields keyword', () => {
    expect(fieldTypeOf(DEFAULT_FIELD_SCHEMA, 'content')).toBe('text');
    expect(fieldTypeOf(DEFAULT_FIELD_SCHEMA, 'size')).toBe('number');
    expect(fieldTypeOf(DEFAULT_FIELD_SCHEMA, 'created')).toBe('date');
    expect(fieldTypeOf(DEFAULT_FIELD_SCHEMA, 'prop_colour')).toBe('keyword');
    expect(fieldTypeOf(DEFAULT_FIELD_SCHEMA, 'toString')).toBe('keyword');
    expect(fieldTypeOf(DEFAULT_FIELD_SCHEMA, '__proto__')).toBe('keyword');
  });
});
