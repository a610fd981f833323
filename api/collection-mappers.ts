/**
 * Kept only for api/routes/auth.ts (`users.collections`), which still imports the list item mapper from here: the
 * collection mappers live with their response schemas in api/operations/collections.ts. Delete this file once that
 * import points there.
 */
export { toCollectionListItem as collectionListItem } from './operations/collections.js';
