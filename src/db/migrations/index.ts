import { InitialSchema1763800000000 } from './1763800000000-initial-schema';
import { Marketplace1763900000000 } from './1763900000000-marketplace';
import { MarketCorrectness1763950000000 } from './1763950000000-market-correctness';
import { Events1764000000000 } from './1764000000000-events';
import { IdempotencyKeys1764100000000 } from './1764100000000-idempotency-keys';
import { ExpiryAndHistory1764600000000 } from './1764600000000-expiry-and-history';
import { CollectionOffersTraits1764700000000 } from './1764700000000-collection-offers-traits';
import { SalesRollups1764800000000 } from './1764800000000-sales-rollups';
import { Webhooks1764500000000 } from './1764500000000-webhooks';
import { OfferSignature1764900000000 } from './1764900000000-offer-signature';
import { CollectionAssetCounts1765000000000 } from './1765000000000-collection-asset-counts';
import { EventDataAsApi1765300000000 } from './1765300000000-event-data-as-api';
import { TrustedDocuments1765400000000 } from './1765400000000-trusted-documents';
import { NameSearch1765405000000 } from './1765405000000-name-search';
import { RelationIndexes1765410000000 } from './1765410000000-relation-indexes';
import { ChainFollower1765420000000 } from './1765420000000-chain-follower';
import { BuyNow1765450000000 } from './1765450000000-buy-now';
import { SettlementOnChain1765460000000 } from './1765460000000-settlement-on-chain';
import { ChainTokenUris1765470000000 } from './1765470000000-chain-token-uris';
import { Currencies1765490000000 } from './1765490000000-currencies';
import { NativeSettledRollups1765495000000 } from './1765495000000-native-settled-rollups';
import { ChainStepChecks1765500000000 } from './1765500000000-chain-step-checks';
import { AssetMetadata1765520000000 } from './1765520000000-asset-metadata';
import { EventTraceContext1765586000000 } from './1765586000000-event-trace-context';
import { TradeListIndexes1765620000000 } from './1765620000000-trade-list-indexes';
import { TradeListCounts1765620000001 } from './1765620000001-trade-list-counts';
import { CollectionFigures1765630000000 } from './1765630000000-collection-figures';
import { ListingPriceBounds1765640000000 } from './1765640000000-listing-price-bounds';
import { ChainMetadataUpdates1765650000000 } from './1765650000000-chain-metadata-updates';
import { ListingApprovals1765660000000 } from './1765660000000-listing-approvals';
import { CollectionFloorBounds1765670000000 } from './1765670000000-collection-floor-bounds';
import { ListedAssetCounts1765680000000 } from './1765680000000-listed-asset-counts';
import { CollectionOwnerVerification1765690000000 } from './1765690000000-collection-owner-verification';
import { MetadataTraceContext1765700000000 } from './1765700000000-metadata-trace-context';
import { CollectionFloorHigh1765710000000 } from './1765710000000-collection-floor-high';
import { TokenOwnerTradeIndexes1765720000000 } from './1765720000000-token-owner-trade-indexes';
import { AssetSorts1765730000000 } from './1765730000000-asset-sorts';
import { ChainOwnershipTransfers1765750000000 } from './1765750000000-chain-ownership-transfers';
import { TokenRoyalties1765750000001 } from './1765750000001-token-royalties';
import { CollectionSalesBounds1765760000000 } from './1765760000000-collection-sales-bounds';
import { TradeRangeIndexes1765760000300 } from './1765760000300-trade-range-indexes';
import { CollectionSalesLows1765800000000 } from './1765800000000-collection-sales-lows';
import { CollectionCounts1765800000100 } from './1765800000100-collection-counts';
import { OfferExpiryWalks1765810000000 } from './1765810000000-offer-expiry-walks';
import { TradePriceCounts1765830000000 } from './1765830000000-trade-price-counts';
import { CollectionListCounts1765840000000 } from './1765840000000-collection-list-counts';
import { CollectionTrendSums1765850000000 } from './1765850000000-collection-trend-sums';
import { CollectionTrendOthers1765860000000 } from './1765860000000-collection-trend-others';
import { ListingAssetNames1765870000000 } from './1765870000000-listing-asset-names';
import { OrdersCountedSales1765880000000 } from './1765880000000-orders-counted-sales';
import { OrdersSalesRollupStatement1765890000000 } from './1765890000000-orders-sales-rollup-statement';
import { CollectionTrendingCounts1765900000000 } from './1765900000000-collection-trending-counts';

/** Every migration, in order. Listed explicitly so the build and jest find the same set. */
export const migrations = [
  InitialSchema1763800000000,
  Marketplace1763900000000,
  MarketCorrectness1763950000000,
  Events1764000000000,
  IdempotencyKeys1764100000000,
  Webhooks1764500000000,
  ExpiryAndHistory1764600000000,
  CollectionOffersTraits1764700000000,
  SalesRollups1764800000000,
  OfferSignature1764900000000,
  CollectionAssetCounts1765000000000,
  EventDataAsApi1765300000000,
  TrustedDocuments1765400000000,
  NameSearch1765405000000,
  RelationIndexes1765410000000,
  ChainFollower1765420000000,
  BuyNow1765450000000,
  SettlementOnChain1765460000000,
  ChainTokenUris1765470000000,
  Currencies1765490000000,
  NativeSettledRollups1765495000000,
  ChainStepChecks1765500000000,
  AssetMetadata1765520000000,
  EventTraceContext1765586000000,
  TradeListIndexes1765620000000,
  TradeListCounts1765620000001,
  CollectionFigures1765630000000,
  ListingPriceBounds1765640000000,
  ChainMetadataUpdates1765650000000,
  ListingApprovals1765660000000,
  CollectionFloorBounds1765670000000,
  ListedAssetCounts1765680000000,
  CollectionOwnerVerification1765690000000,
  MetadataTraceContext1765700000000,
  CollectionFloorHigh1765710000000,
  TokenOwnerTradeIndexes1765720000000,
  AssetSorts1765730000000,
  ChainOwnershipTransfers1765750000000,
  TokenRoyalties1765750000001,
  CollectionSalesBounds1765760000000,
  TradeRangeIndexes1765760000300,
  CollectionSalesLows1765800000000,
  CollectionCounts1765800000100,
  OfferExpiryWalks1765810000000,
  TradePriceCounts1765830000000,
  CollectionListCounts1765840000000,
  CollectionTrendSums1765850000000,
  CollectionTrendOthers1765860000000,
  ListingAssetNames1765870000000,
  OrdersCountedSales1765880000000,
  OrdersSalesRollupStatement1765890000000,
  CollectionTrendingCounts1765900000000,
];
