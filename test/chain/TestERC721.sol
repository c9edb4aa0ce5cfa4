// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// OpenZeppelin's ERC721 with an open mint: the tests' contract (anyone may mint any free id).
contract TestERC721 is ERC721 {
    constructor() ERC721("Test", "TST") {}

    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }
}
