/** The benefit type registry: one strategy per type. */
import type { BenefitType } from '../entities.ts';
import type { BenefitTypeStrategy } from './strategy.ts';
import { customStrategy } from './custom.ts';
import { discordStrategy } from './discord.ts';
import { downloadablesStrategy } from './downloadables.ts';
import { githubRepositoryStrategy } from './github-repository.ts';
import { licenseKeysStrategy } from './license-keys.ts';
import { meterCreditStrategy } from './meter-credit.ts';

export const benefitStrategies = {
  custom: customStrategy,
  discord: discordStrategy,
  downloadables: downloadablesStrategy,
  github_repository: githubRepositoryStrategy,
  license_keys: licenseKeysStrategy,
  meter_credit: meterCreditStrategy,
} satisfies Record<BenefitType, BenefitTypeStrategy<any>>;

export function strategyFor(type: BenefitType): BenefitTypeStrategy<any> {
  return benefitStrategies[type];
}

export type { BenefitTypeStrategy } from './strategy.ts';
