'use strict';
// Generated from core/packages/env-names.ts by bin/env-names.ts: edit that file, not this one.
module.exports = {
  credential: '(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PAT|ACCESS_KEY_ID|SECRET_ACCESS_KEY)$',
  address: '(^|_)(URL|URI|ENDPOINT)$',
  placeholder: 'toolshed-placeholder',
  placeholderUrl: 'http://toolshed-placeholder.invalid',
};
