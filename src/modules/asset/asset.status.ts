import { Any, EntityManager } from 'typeorm';
import { Asset, AssetStatus } from './asset.entity';

/**
 * Stores assets' status (listed while one of their listings is active) as of `now`: one UPDATE however many,
 * through the repository. Inside the caller's transaction, with the assets locked.
 */
export async function setAssetsStatus(m: EntityManager, assetIds: readonly string[], status: AssetStatus, now: Date): Promise<void> {
  await m.getRepository(Asset).update({ id: Any([...assetIds]) }, { status, updatedAt: now });
}
