"""Training of petsing's pet-face models (see render-node/models/README.md, the model card)."""
