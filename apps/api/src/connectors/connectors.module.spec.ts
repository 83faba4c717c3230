import { LazyModuleLoader } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { CONNECTOR_TYPE, type ConnectorType } from '@gateway/connector-api';
import { GATEWAY_CONNECTOR_MODULES } from './connectors.module';

// Each line names a kind and how to load its lib's module; a wrong path or export in one line would
// only surface when someone configures that kind. This loads every line as the registry does.
describe('the gateway connector kinds (GATEWAY_CONNECTOR_MODULES)', () => {
  let lazyModules: LazyModuleLoader;
  beforeAll(async () => {
    lazyModules = (await Test.createTestingModule({}).compile()).get(LazyModuleLoader);
  });

  it.each(Object.entries(GATEWAY_CONNECTOR_MODULES))('%s: its module provides that connector type', async (typeId, loadModule) => {
    const type = (await lazyModules.load(loadModule)).get<ConnectorType>(CONNECTOR_TYPE);
    expect(type.typeId).toBe(typeId);
    expect(typeof type.create).toBe('function');
  });

  it('are the eight kinds', () => {
    expect(Object.keys(GATEWAY_CONNECTOR_MODULES).sort()).toEqual(['cmis', 'elasticsearch', 'filesystem', 'graph', 'mongodb', 'opensearch', 's3', 'sharepoint', 'solr']);
  });
});
