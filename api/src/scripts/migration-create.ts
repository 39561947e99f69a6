/** Writes a migration for the difference between the entities and the database: `npm run migration:create -w api`. */
import { loadConfig } from '../config.ts';
import { initOrm, migrate } from '../kit/db.ts';
import { allEntities } from '../modules/entities.ts';

const orm = await initOrm(loadConfig(), allEntities);
await migrate(orm);
const result = await orm.migrator.create(undefined, false, process.argv.includes('--initial'));
console.log(result.fileName ? `wrote ${result.fileName}` : 'no changes');
await orm.close();
