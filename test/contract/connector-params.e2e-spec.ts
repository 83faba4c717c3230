import { Test } from '@nestjs/testing';
import { CONNECTOR_TYPE, InvalidArgumentError, type ConnectorType } from '@gateway/connector-api';
import { GATEWAY_CONNECTOR_MODULES } from '../../apps/api/src/connectors/connectors.module';

/**
 * Every connector kind refuses a parameter it does not know, naming it, before it connects or
 * touches a file: a misspelt key (`commitWithinMS`, `rooot`) must stop the start, not be ignored.
 * A new kind joins by its line in the kind list; no test code to add.
 */
describe.each(Object.keys(GATEWAY_CONNECTOR_MODULES))('%s connector params', (kind) => {
  it('refuses an unknown parameter with 400 naming it', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [await GATEWAY_CONNECTOR_MODULES[kind]()] }).compile();
    const type = moduleRef.get<ConnectorType>(CONNECTOR_TYPE);
    const created = type.create({ id: 'typo', typeId: kind, description: '', params: { misspelt: 'x' } }, { dataDir: '/nonexistent-gateway-data' });
    await expect(created).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(created).rejects.toMatchObject({ parameter: 'misspelt', message: expect.stringContaining('unknown parameter') });
  });
});
