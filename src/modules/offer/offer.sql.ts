import { DataSource, EntityManager } from 'typeorm';
import { sqlScope } from '../../common/read-model';
import { selectList } from '../../common/read-model-sql';
import { OFFER_READ } from './offer.read';
import { Offer } from './offer.types';

export async function offersByIds(db: DataSource | EntityManager, ids: readonly string[], now: Date): Promise<Offer[]> {
  const s = sqlScope(undefined, now);
  return db.query(`SELECT ${selectList(OFFER_READ, s)} FROM offers o WHERE o.id = ANY(${s.p.add(ids)}::uuid[])`, s.p.values);
}
