// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721URIStorage} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721URIStorage.sol";
import {ERC721Royalty} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Royalty.sol";

/// OpenZeppelin's ERC721 with ERC-4906 (ERC721URIStorage: a token URI set per token, each change announced by
/// MetadataUpdate(tokenId); `announceBatch` emits BatchMetadataUpdate(from, to)) and ERC-2981 (ERC721Royalty:
/// a default royalty and per-token ones). Everything is open: the tests call it from any account.
contract TestERC721Metadata is ERC721URIStorage, ERC721Royalty {
    constructor() ERC721("Test Metadata", "TSTM") {}

    /// Mints `tokenId` to `to` with its token URI (MetadataUpdate is emitted with the Transfer).
    function mint(address to, uint256 tokenId, string calldata uri) external {
        _mint(to, tokenId);
        _setTokenURI(tokenId, uri);
    }

    /// Changes a token's URI: MetadataUpdate(tokenId).
    function setTokenURI(uint256 tokenId, string calldata uri) external {
        _setTokenURI(tokenId, uri);
    }

    /// Says the documents of ids fromTokenId .. toTokenId changed: BatchMetadataUpdate(fromTokenId, toTokenId).
    function announceBatch(uint256 fromTokenId, uint256 toTokenId) external {
        emit BatchMetadataUpdate(fromTokenId, toTokenId);
    }

    function setDefaultRoyalty(address receiver, uint96 feeNumerator) external {
        _setDefaultRoyalty(receiver, feeNumerator);
    }

    function deleteDefaultRoyalty() external {
        _deleteDefaultRoyalty();
    }

    function setTokenRoyalty(uint256 tokenId, address receiver, uint96 feeNumerator) external {
        _setTokenRoyalty(tokenId, receiver, feeNumerator);
    }

    function tokenURI(uint256 tokenId) public view override(ERC721, ERC721URIStorage) returns (string memory) {
        return super.tokenURI(tokenId);
    }

    function supportsInterface(bytes4 interfaceId) public view override(ERC721URIStorage, ERC721Royalty) returns (bool) {
        return super.supportsInterface(interfaceId);
    }
}
