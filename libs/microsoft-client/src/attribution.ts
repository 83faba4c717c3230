/**
 * Library item fields the SharePoint and Graph connectors keep the acting gateway user in: app-only calls all act
 * as the app, so the service's own Author/Editor name the app, not the user.
 */
export const ATTRIBUTION_FIELDS = { createdBy: 'GatewayCreatedBy', modifiedBy: 'GatewayModifiedBy', checkedOutBy: 'GatewayCheckedOutBy' } as const;
