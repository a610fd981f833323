/** `npx tsx bin/env-names.ts`: writes the guest's copy of the env name patterns (core/packages/env-names.ts). */
import fs from 'node:fs';
import { guestEnvNamesModule } from '../core/packages/env-names.js';

fs.writeFileSync(new URL('../sandbox/guest/env-names.cjs', import.meta.url), guestEnvNamesModule());
