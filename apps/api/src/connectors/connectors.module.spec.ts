import { CONNECTOR_KINDS } from './connectors.module';

// The registry list names each kind and how to require it; a wrong path or export in one
// line would only surface when someone configures that kind. This loads every line.
describe('connector kinds (lazy registry list)', () => {
  it.each(CONNECTOR_KINDS.map((k) => [k.typeId, k]))('%s loads the connector type it names', async (typeId, kind) => {
    const type = await kind.load();
    expect(type.typeId).toBe(typeId);
    expect(typeof type.create).toBe('function');
  });

  it('lists each kind once', () => {
    const ids = CONNECTOR_KINDS.map((k) => k.typeId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['filesystem', 'cmis', 'solr', 'elasticsearch', 'mongodb', 's3', 'graph', 'sharepoint']));
  });
});
