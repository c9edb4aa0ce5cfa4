import { Arg, Ctx, Field, Int, Mutation, ObjectType, Resolver } from 'type-graphql';
import type { Context } from '../../common/request/context';
import { AddressScalar, TokenIdScalar } from '../../common/scalars';
import { Asset } from '../asset/asset.entity';
import { refreshAssetMetadata, refreshCollectionMetadata } from './metadata.service';

@ObjectType({ simpleResolvers: true, description: "A collection's refresh of its assets' tokenURI documents" })
export class CollectionRefresh {
  @Field(() => Int, { description: 'Assets with a tokenURI whose document is queued to be fetched again' })
  queued: number;
}

@Resolver()
export class MetadataResolver {
  @Mutation(() => Asset, {
    description:
      'Fetches the document behind the asset\'s tokenURI again (any API key; once per key and asset per METADATA_REFRESH_INTERVAL_S, RATE_LIMITED otherwise). ' +
      'Returns the asset with metadataStatus pending; asset.metadata_updated follows when the document changed',
  })
  refreshAssetMetadata(
    @Arg('tokenAddress', () => AddressScalar) tokenAddress: string,
    @Arg('tokenId', () => TokenIdScalar) tokenId: string,
    @Arg('chainId', () => String, { nullable: true }) chainId: string | null,
    @Ctx() ctx: Context,
  ) {
    return refreshAssetMetadata(ctx, tokenAddress, tokenId, chainId);
  }

  @Mutation(() => CollectionRefresh, {
    description:
      "Fetches the tokenURI documents of every asset of the collection again (its owner or an admin; once per key and collection per METADATA_REFRESH_INTERVAL_S). Returns how many were queued",
  })
  refreshCollectionMetadata(
    @Arg('address', () => AddressScalar) address: string,
    @Arg('chainId', () => String, { nullable: true }) chainId: string | null,
    @Ctx() ctx: Context,
  ) {
    return refreshCollectionMetadata(ctx, address, chainId).then((queued): CollectionRefresh => ({ queued }));
  }
}
