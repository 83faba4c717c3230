import type { ContentConnector } from '@gateway/connector-api';

/**
 * A connector whose `changeFeed` group the change-feed contract (../changes.contract.e2e-spec.ts) runs
 * against. A kind that offers the group adds a file `<typeId>.fixture.ts` here exporting one of these
 * as `fixture`, and no test code: what the suite cannot do through the connector itself (a rename or a
 * move, which the connector interface has no operation for; forcing the source to drop its change
 * history) the fixture does through the source's own API.
 */
export interface ChangeFeedFixture {
  typeId: string;
  setup(): Promise<ChangeFeedEnvironment>;
}

export interface ChangeFeedEnvironment {
  /** Built by its ConnectorType from a definition, as the gateway builds it. */
  connector: ContentConnector;
  /** Absolute repository path of an empty folder the suite fills. */
  folderPath: string;
  rename(id: string, newName: string): Promise<void>;
  move(id: string, targetFolderId: string): Promise<void>;
  /** Makes the source refuse every change token issued so far, as it does once its history is trimmed. */
  expireTokens(): Promise<void>;
  teardown(): Promise<void>;
}
