import { Migration } from '@mikro-orm/migrations';

export class Migration20261125134132 extends Migration {

  override name = 'Migration20261125134132';

  override up(): void | Promise<void> {
    this.addSql(`alter table "outbox_events" add "seq" bigserial;`);
    this.addSql(`create index "outbox_events_undispatched_seq_index" on "outbox_events" ("seq") where "dispatched_at" is null;`);

    this.addSql(`alter table "webhook_events" add "claimed_until" timestamptz null, add "retry_started_at" timestamptz null;`);
    this.addSql(`create index "webhook_events_in_flight_index" on "webhook_events" ("created_at") where "succeeded" is null and "retry_started_at" is null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "outbox_events_undispatched_seq_index";`);
    this.addSql(`alter table "outbox_events" drop column "seq";`);

    this.addSql(`drop index "webhook_events_in_flight_index";`);
    this.addSql(`alter table "webhook_events" drop column "claimed_until", drop column "retry_started_at";`);
  }

}
