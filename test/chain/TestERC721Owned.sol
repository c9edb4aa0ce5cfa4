// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// OpenZeppelin's ERC721 with ERC-173 ownership (Ownable: owner(), transferOwnership, renounceOwnership),
/// owned by its deployer; the mint stays open, as in TestERC721.
contract TestERC721Owned is ERC721, Ownable {
    constructor() ERC721("Test Owned", "TSTO") Ownable(msg.sender) {}

    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }
}
