// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// OpenZeppelin's ERC721 with an open mint (anyone may mint any free id), a base URI (tokenURI is
/// "https://nft.test/token/<id>") and batch calls that make many transfers in one transaction (the bench's
/// chain of 100,000 transfers), and a burn (a token whose tokenURI then reverts).
contract TestERC721 is ERC721 {
    constructor() ERC721("Test", "TST") {}

    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }

    /// Mints ids firstId .. firstId + count - 1 to `to`.
    function mintBatch(address to, uint256 firstId, uint256 count) external {
        for (uint256 i = 0; i < count; i++) _mint(to, firstId + i);
    }

    /// Transfers the caller's ids firstId .. firstId + count - 1 to `to`.
    function transferBatch(address to, uint256 firstId, uint256 count) external {
        for (uint256 i = 0; i < count; i++) transferFrom(msg.sender, to, firstId + i);
    }

    function burn(uint256 tokenId) external {
        _update(address(0), tokenId, _msgSender());
    }

    function _baseURI() internal pure override returns (string memory) {
        return "https://nft.test/token/";
    }
}
