/** A search document for engine tests: id, name and description given, the rest ordinary unless overridden. */
import type { SearchDocument } from '../../core/search/engine.js';

export const searchDoc = (d: Pick<SearchDocument, 'id' | 'name' | 'description'> & Partial<SearchDocument>): SearchDocument => ({
  packageName: '@demo/tools',
  category: 'automation',
  healthStatus: 'HEALTHY',
  qualityScore: 0.5,
  ...d,
});
