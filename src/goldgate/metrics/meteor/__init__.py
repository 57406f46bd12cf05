"""METEOR with its WordNet reader and NLTK's tokenizer."""
