DROP TABLE agent_index_versions;
DROP TABLE agent_embeddings;
DROP TABLE agents;
