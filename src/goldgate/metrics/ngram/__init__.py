"""N-gram metrics: BLEU, chrF, ROUGE, and the batch n-gram engine they share."""
